// The human agent: the domain model its store persists. Its name follows checkDisplayName
// (src/display-name.ts), its token's format is src/auth/agent-token.ts.

/** A human agent of an owner, as listed (the token is never stored, only its SHA-256). */
export interface Agent {
  id: string;
  user_id: string;
  name: string;
  created_at: string;
  active: boolean;
}
