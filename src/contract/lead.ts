/** Leads as the dashboard lists them. Part of the contract (see README.md beside this file). */

/** A lead: SPEC's payload fields plus where and when it was left. */
export interface Lead {
  lead_id: string;
  chatbot_id: string;
  session_id: string;
  name: string;
  email: string;
  phone: string;
  /** Custom form fields by name; empty object if none. */
  custom_data: Record<string, string>;
  created_at: string;
}

/** Who a conversation's visitor said they are, as the dashboard names the conversation after its lead. */
export type LeadName = Pick<Lead, 'lead_id' | 'name' | 'email'>;
