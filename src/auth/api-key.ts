// The API key's rules: who may hold keys and how many. Its store keeps them (the cap and the plan
// rule in one script); a key's name follows checkDisplayName (src/display-name.ts), its format is
// api-key-token.ts.

/** SPEC's cap on active keys per account. */
export const MAX_ACTIVE_KEYS = 5;
/** The plan that grants API access (DESIGN.md). */
export const API_PLAN = 'scale';

/** Who a key belongs to. */
export interface KeyOwner {
  userId: string;
  keyId: string;
}
