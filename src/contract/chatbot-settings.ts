/**
 * A chatbot's widget, lead-form, escalation and retrieval settings: the dashboard reads and changes
 * them, and the widget renders the public part. Part of the contract (see README.md beside this file).
 */

/** A custom field of the lead form (name, email and phone are always there). */
export interface LeadField {
  name: string;
  label: string;
  required: boolean;
}

/** A call-to-action button of the widget. */
export interface CallToAction {
  id: string;
  label: string;
  /** `link` opens `url`; `escalate` asks for a human; `message` sends `message` as the visitor. */
  action: 'link' | 'escalate' | 'message';
  url?: string;
  message?: string;
}

/** When a conversation escalates on its own, besides the visitor asking. */
export interface EscalationRules {
  /** The visitor's message asks for a human (several languages). */
  smart_intent: boolean;
  /** Words or phrases that escalate when a visitor message contains one (case-insensitive). */
  keywords: string[];
  /** Escalate after this many consecutive fallback replies (0: never). */
  fallback_streak: number;
}

/** How the widget looks. */
export interface WidgetLook {
  title: string;
  color: string;
  welcome_message: string;
}

/** How a chatbot looks up passages for a visitor message. */
export interface RetrievalSettings {
  /**
   * Before retrieving, the chatbot's own LLM rewrites the message (with the last turns) into a
   * standalone question and search terms, and the passages found for each are fused. Costs one more
   * LLM call per message.
   */
  query_rewrite: boolean;
}

/** Per-chatbot settings of the widget, lead form, escalation and retrieval. */
export interface ChatbotSettings {
  /** Origins allowed to open the widget socket, e.g. `https://example.com`; empty: any. */
  allowed_origins: string[];
  lead_fields: LeadField[];
  ctas: CallToAction[];
  escalation: EscalationRules;
  widget: WidgetLook;
  retrieval: RetrievalSettings;
}

/** `GET` and `PATCH /dashboard/api/chatbots/{id}/settings`: the settings and whose they are. */
export type ChatbotSettingsView = { chatbot_id: string } & ChatbotSettings;

/**
 * `PATCH …/settings` (and `bot configure`): some of the settings; what is left out stays as it was.
 * A lead field's `required` defaults to false.
 */
export interface SettingsPatchBody {
  allowed_origins?: string[];
  lead_fields?: Array<Omit<LeadField, 'required'> & { required?: boolean }>;
  ctas?: CallToAction[];
  escalation?: Partial<EscalationRules>;
  widget?: Partial<WidgetLook>;
  retrieval?: Partial<RetrievalSettings>;
}
