/** An account's message usage against its plan. Part of the contract (see README.md beside this file). */

/** `GET /dashboard/api/usage`: messages this month against the plan's quota (null: unlimited), per day. */
export interface Usage {
  plan: string;
  /** `YYYY-MM`, UTC. */
  month: string;
  used: number;
  limit: number | null;
  days: Array<{ date: string; messages: number }>;
  /** Per chatbot, the AI replies of the month that visitors rated up and down (thumbs in the widget). */
  ratings: Array<{ chatbot_id: string; name: string; up: number; down: number }>;
}
