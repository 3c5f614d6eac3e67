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

/** How the chatbot's answers are given. */
export interface AnswerSettings {
  /**
   * Replies cite the passages they use as `[1]`, `[2]`: the widget shows them as numbered source
   * chips, Telegram and WhatsApp as a short "Sources:" list, agents beside the reply.
   */
  citations: boolean;
  /**
   * The REST API's replies keep their `[1]`-style markers, followed by a plain "Sources:" list;
   * off, the API's replies have no markers.
   */
  api_citations: boolean;
  /**
   * When retrieval finds no passage above the relevance floor, the chatbot does not ask its LLM: it
   * answers with its fallback message and offers a human (or the lead form when none is online).
   */
  sources_only: boolean;
}

/** A day of the week as office hours name it. */
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/**
 * When people answer. Outside the hours, a visitor who asks for a person is offered the contact form
 * and told when the office opens; inside them with no agent online, after `contact_after_minutes`.
 */
export interface OfficeHours {
  enabled: boolean;
  /** An IANA time zone, e.g. `Europe/Berlin`. */
  time_zone: string;
  /** Each day's opening intervals, `["09:00","17:00"]` (the end excluded; `24:00` is midnight). */
  weekly: Record<Weekday, Array<[string, string]>>;
  /** Days off, `YYYY-MM-DD` in the office's time zone. */
  holidays: string[];
  contact_after_minutes: number;
}

/**
 * How long the chatbot's conversations and leads are kept, in days; `null` keeps them for ever. The
 * gateways delete a conversation whose last activity, and a lead whose capture, is older than that.
 */
export interface RetentionSettings {
  conversations_days: number | null;
  leads_days: number | null;
}

/** Per-chatbot settings of the widget, lead form, escalation, retrieval, answers, office hours and retention. */
export interface ChatbotSettings {
  /** Origins allowed to open the widget socket, e.g. `https://example.com`; empty: any. */
  allowed_origins: string[];
  lead_fields: LeadField[];
  ctas: CallToAction[];
  escalation: EscalationRules;
  widget: WidgetLook;
  retrieval: RetrievalSettings;
  answers: AnswerSettings;
  hours: OfficeHours;
  retention: RetentionSettings;
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
  answers?: Partial<AnswerSettings>;
  /** Office hours are replaced whole (what is left out of them takes its default). */
  hours?: Partial<OfficeHours>;
  retention?: Partial<RetentionSettings>;
}
