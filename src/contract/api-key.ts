/** An account's API keys as the dashboard shows them. Part of the contract (see README.md beside this file). */

/** A key as listed: never the key itself nor its hash. */
export interface ApiKey {
  id: string;
  name: string;
  /** The key's first 8 characters (`ic_…`). */
  prefix: string;
  last_used_at: string | null;
  created_at: string;
  active: boolean;
}

/** A key as created: the full key, shown this once. */
export interface CreatedApiKey {
  id: string;
  name: string;
  prefix: string;
  key: string;
  created_at: string;
}

/** `POST /dashboard/api/keys` */
export interface NewApiKeyBody {
  name: string;
}
