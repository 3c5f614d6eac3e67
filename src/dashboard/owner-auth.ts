import {
  AuthenticationError,
  ConflictError,
  NotFoundError,
  RateLimitError,
  UnavailableError,
  ValidationError,
} from '../errors.ts';
import { checkEmail, normalizeEmail, type Account } from '../accounts/account.ts';
import type { AccountStore } from '../store/account-store.ts';
import type { InviteStore } from '../store/invite-store.ts';
import type { LoginGate } from '../admission/login-gate.ts';
import type { PasswordStore } from '../store/password-store.ts';
import type { SetupStore } from '../store/setup-store.ts';
import type { NewSession, SessionStore } from '../store/session-store.ts';
import {
  checkPassword,
  decoyHash,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PasswordWorkBusyError,
  verifyPassword,
} from './password-hash.ts';

/** The one answer to a sign-in that failed for any reason but the rate limit. */
export const BAD_CREDENTIALS = 'Email or password is incorrect.';
/** The answer to a client that has as many sign-ins being checked as it may have at once. */
export const SIGN_INS_IN_FLIGHT = 'Too many sign-in attempts at once. Try again in a moment.';
/** The answer when this gateway's password checks are all taken (by anyone). */
export const PASSWORD_CHECKS_BUSY = 'Too many sign-ins are being checked right now. Try again in a moment.';
/** The answer to an invitation link that is unknown, used or expired. */
const BAD_INVITE = 'This invitation link is invalid, used or expired.';

/** The answer to a setup token that is unknown, used or expired. */
export const BAD_SETUP_TOKEN = 'This setup token is invalid, used or expired. Restart the gateway for a new one.';
/** The answer to a first-run setup once an owner account exists. */
export const SETUP_DONE = 'The owner account already exists. Sign in instead.';
/** How long a first-run setup token works. */
export const SETUP_TOKEN_TTL_HOURS = 24;

/** How long an invitation link works unless told otherwise. */
const INVITE_TTL_HOURS = 72;

/** A new dashboard session for an owner. */
export interface SignedIn {
  account: Account;
  session: NewSession;
}

/** What `user invite` prints. */
export interface InviteLink {
  user_id: string;
  email: string;
  url: string;
  expires_at: string;
}

/** What owner sign-in works with. */
export interface OwnerAuthDeps {
  accounts: AccountStore;
  passwords: PasswordStore;
  sessions: SessionStore;
  invites: InviteStore;
  setup: SetupStore;
  loginGate: LoginGate;
  /** The plan of the first owner (the gateway's DEFAULT_PLAN). */
  defaultPlan: string;
}

/**
 * Owner accounts' dashboard credentials: setting a password (CLI), invitation links (CLI) and
 * accepting them (dashboard), signing in with the login rate limits, and signing out everywhere.
 * The CLI and the dashboard API share this one implementation.
 */
export class OwnerAuth {
  private readonly deps: OwnerAuthDeps;

  constructor(deps: OwnerAuthDeps) {
    this.deps = deps;
  }

  /** Sets (or replaces) the owner's password; every open session of the owner ends. */
  async setPassword(userId: string, password: unknown): Promise<Account> {
    const checked = checkPassword(password);
    const account = await this.deps.accounts.get(userId);
    await this.deps.passwords.set(account.id, await hashPassword(checked));
    return account;
  }

  /**
   * A one-time link whose page lets the owner set a password. The token travels in the URL's
   * fragment, which browsers never send to a server, so it reaches no access log or Referer.
   */
  async invite(userId: string, baseUrl: string, hours = INVITE_TTL_HOURS): Promise<InviteLink> {
    if (!Number.isInteger(hours) || hours < 1 || hours > 24 * 30) {
      throw new ValidationError('hours must be a whole number from 1 to 720.');
    }
    const account = await this.deps.accounts.get(userId);
    const invite = await this.deps.invites.create(account.id, hours * 3600);
    const url = new URL('/dashboard/', baseUrl);
    url.hash = `/invite/${invite.token}`;
    return { user_id: account.id, email: account.email, url: url.toString(), expires_at: invite.expires_at };
  }

  /** Sets the password an invitation asked for and signs the owner in. The link works once. */
  async acceptInvite(token: unknown, password: unknown): Promise<SignedIn> {
    const checked = checkPassword(password);
    // Checked before the slow hash, so a dead link costs no scrypt work.
    const invite = await this.deps.invites.find(token);
    if (!invite) throw new NotFoundError(BAD_INVITE);
    const hash = await hashPassword(checked);
    // The invitation is used up first and only now, after the slow hash, in the one script that then
    // sets the password and ends the sessions (the invitation key is in the owner's slot too): two
    // tabs racing the same link cannot both win, and a used link has always set its password.
    if (!(await this.deps.passwords.set(invite.userId, hash, invite))) throw new NotFoundError(BAD_INVITE);
    return this.openSession(invite.userId, hash, new NotFoundError(BAD_INVITE));
  }

  /**
   * A first-run setup token, when no owner account exists (undefined otherwise): the gateway prints
   * it at startup, and only then, for whoever runs it.
   */
  async firstRunToken(): Promise<string | undefined> {
    if (await this.deps.accounts.anyExists()) return undefined;
    return this.deps.setup.issue(SETUP_TOKEN_TTL_HOURS * 3600);
  }

  /** Whether the dashboard should offer to create the first owner. */
  async setupNeeded(): Promise<boolean> {
    return !(await this.deps.accounts.anyExists());
  }

  /**
   * Creates the first owner account with a setup token and signs it in. The token is used up only
   * after the input was checked and the slow hash done; then exactly one caller claims the first
   * account, so two setup pages (or two tokens) racing make one owner.
   */
  async createFirstOwner(token: unknown, rawEmail: unknown, password: unknown): Promise<SignedIn> {
    if (typeof rawEmail !== 'string') throw new ValidationError('email must be a valid email address.');
    const email = checkEmail(rawEmail);
    const checked = checkPassword(password);
    if (await this.deps.accounts.anyExists()) throw new ConflictError(SETUP_DONE);
    if (!(await this.deps.setup.pending(token))) throw new NotFoundError(BAD_SETUP_TOKEN);
    const hash = await hashPassword(checked);
    if (!(await this.deps.setup.consume(token))) throw new NotFoundError(BAD_SETUP_TOKEN);
    if (!(await this.deps.accounts.claimFirst())) throw new ConflictError(SETUP_DONE);
    const account = await this.deps.accounts.create(email, this.deps.defaultPlan);
    await this.deps.passwords.set(account.id, hash);
    return this.openSession(account.id, hash, new AuthenticationError(BAD_CREDENTIALS));
  }

  /**
   * Signs in with email and password from a client address. An unknown email, an account without a
   * password and a wrong password all fail alike, after the same scrypt work. The limits (see
   * {@link LoginGate}) answer 429 before any scrypt work; a gateway whose password checks are all
   * taken answers 503 at once rather than queueing the sign-in behind them.
   */
  async signIn(rawEmail: unknown, password: unknown, address: string): Promise<SignedIn> {
    if (typeof rawEmail !== 'string' || rawEmail.trim() === '') throw new ValidationError('email is required.');
    if (typeof password !== 'string' || password === '') throw new ValidationError('password is required.');
    const email = normalizeEmail(rawEmail).slice(0, 254);
    const admission = await this.deps.loginGate.admit(email, address);
    if (admission.kind === 'busy') throw new RateLimitError(SIGN_INS_IN_FLIGHT);
    if (admission.kind === 'limited') {
      const minutes = Math.max(1, Math.ceil(admission.retryAfterSeconds / 60));
      throw new RateLimitError(
        `Too many sign-in attempts. Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`,
      );
    }
    // A success, or a check the server could not run, is not held against the client.
    let forgive = false;
    try {
      const signedIn = await this.checkCredentials(email, password).catch((error: unknown) => {
        if (!(error instanceof PasswordWorkBusyError)) throw error;
        forgive = true;
        throw new UnavailableError(PASSWORD_CHECKS_BUSY, { cause: error });
      });
      forgive = true;
      return signedIn;
    } finally {
      await this.deps.loginGate.finish(admission.ticket, forgive);
    }
  }

  private async checkCredentials(email: string, password: string): Promise<SignedIn> {
    const userId = await this.deps.accounts.findIdByEmail(email);
    const stored = userId ? await this.deps.passwords.get(userId) : undefined;
    const candidate = password.length <= PASSWORD_MAX_LENGTH ? password : '';
    const matches = await verifyPassword(candidate, stored ?? (await decoyHash()));
    if (!userId || stored === undefined || !matches || candidate === '') throw new AuthenticationError(BAD_CREDENTIALS);
    return this.openSession(userId, stored, new AuthenticationError(BAD_CREDENTIALS));
  }

  /** Ends every dashboard session of the owner (this one included). */
  async signOutEverywhere(userId: string): Promise<void> {
    await this.deps.sessions.endAll(userId);
  }

  /**
   * A session opened with the password `hash`, unless the password changed meanwhile (a sign-in may
   * wait its turn at scrypt for a while): that change ended every session, this one included.
   */
  private async openSession(userId: string, hash: string, refusal: Error): Promise<SignedIn> {
    const account = await this.deps.accounts.get(userId);
    const session = await this.deps.sessions.create(userId, hash);
    if (!session) throw refusal;
    return { account, session };
  }
}
