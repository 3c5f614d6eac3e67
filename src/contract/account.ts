/**
 * The dashboard's owner account and sign-in. Part of the contract (see README.md beside this file).
 */

/** An owner account. */
export interface Account {
  id: string;
  email: string;
  plan: string;
  created_at: string;
}

/** `GET`/`POST /dashboard/api/session`, `POST …/invite`: who is signed in, and the session's CSRF token. */
export interface SessionInfo {
  user: Account;
  csrf_token: string;
  /** PUBLIC_URL, when the operator set it (the widget snippet and links are built from it). */
  public_url: string | null;
}

/** `POST /dashboard/api/session`: sign in. */
export interface SignInBody {
  email: string;
  password: string;
}

/** `POST /dashboard/api/invite`: the password an invitation link asked for. */
export interface InviteBody {
  token: string;
  password: string;
}

/** `GET /dashboard/api/setup`: whether no owner account exists yet (the first-run page is offered). */
export interface SetupState {
  setup_needed: boolean;
}

/** `POST /dashboard/api/setup`: the first owner account, with the setup token the gateway printed. */
export interface SetupBody {
  token: string;
  email: string;
  password: string;
}

/** `DELETE /dashboard/api/session` and `…/sessions` (everywhere). */
export interface SignedOut {
  signed_out: true;
}
