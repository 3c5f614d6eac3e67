/** Shapes the management API answers with (see src/http/dashboard-*-routes.ts). */

export interface Account {
  id: string;
  email: string;
  plan: string;
  created_at: string;
}

export interface SessionInfo {
  user: Account;
  csrf_token: string;
  public_url: string | null;
}

export type Provider = 'gemini' | 'chatgpt' | 'ollama';

export interface Chatbot {
  id: string;
  name: string;
  slug: string;
  provider: Provider;
  is_active: boolean;
  created_at: string;
  system_prompt: string;
  fallback_message: string;
  model: string;
}

export interface Source {
  id: string;
  type: string;
  title: string;
  url: string;
  status: 'pending' | 'crawling' | 'processing' | 'done' | 'failed';
  page_count: number;
  created_at: string;
  chatbot_id: string;
  error: string;
  /** What a connector source is doing now ("read 3 of 10 documents"), '' when idle. */
  progress: string;
  /** Connector sources only: what they read (the link as canonicalised) and through which connection. */
  reference?: string;
  connection_id?: string;
  /** Url and connector sources only: how often they are synced again. */
  refresh?: Refresh;
  /** Url and connector sources only: what the last sync did (the first ingestion counts as one). */
  last_sync?: SyncRecord;
  /** Url and connector sources only: when the next sync is due; '' when none is scheduled. */
  next_sync_at?: string;
}

/** A url or connector source's re-sync schedule. */
export type Refresh = 'off' | 'daily' | 'weekly';

/** What a source's last sync did: when it ended ('' before the first), why it failed ('' when it did not). */
export interface SyncRecord {
  at: string;
  error: string;
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
}

/** `POST /sources/:id/sync`: the source, and whether its sync was queued or is running already. */
export interface SyncStarted extends Source {
  sync: 'queued' | 'running';
}

/** The source types the dashboard adds through a connector (SPEC: "Add from dashboard: yes"). */
export type ConnectorType = 'youtube' | 'google_drive' | 'notion' | 'dropbox';

/** `GET /connections`: a service the owner connected; the secret is never shown. */
export interface Connection {
  id: string;
  service: string;
  status: 'active' | 'needs_reauth';
  created_at: string;
  /** How it signs in: only an `oauth` connection is reconnected from the dashboard. */
  auth_kind: 'token' | 'oauth' | 'service_account' | 'client_credentials';
  /** Who or what is connected, when known (a workspace, an email). */
  label: string;
  base_url: string;
}

/** `GET /connection-services`: what the Connections page offers and how each service connects. */
export interface ConnectionService {
  service: string;
  label: string;
  method: 'oauth' | 'token';
  /** False when the server operator has not configured the service's OAuth client. */
  available: boolean;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  last_used_at: string | null;
  created_at: string;
  active: boolean;
}

export interface CreatedKey {
  id: string;
  name: string;
  prefix: string;
  key: string;
  created_at: string;
}

export const EVENT_NAMES = ['lead.captured', 'conversation.started', 'message.received', 'conversation.escalated'];

export interface Webhook {
  id: string;
  chatbot_id: string;
  url: string;
  events: string[];
  secret: string;
  active: boolean;
  created_at: string;
}

export interface Attempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string;
}

export interface Delivery {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: Attempt[];
}

export interface LeadField {
  name: string;
  label: string;
  required: boolean;
}

export interface CallToAction {
  id: string;
  label: string;
  action: 'link' | 'escalate' | 'message';
  url?: string;
  message?: string;
}

export interface Settings {
  chatbot_id: string;
  allowed_origins: string[];
  lead_fields: LeadField[];
  ctas: CallToAction[];
  escalation: { smart_intent: boolean; keywords: string[]; fallback_streak: number };
  widget: { title: string; color: string; welcome_message: string };
  retrieval: { query_rewrite: boolean };
}

export interface Lead {
  lead_id: string;
  chatbot_id: string;
  session_id: string;
  name: string;
  email: string;
  phone: string;
  custom_data: Record<string, string>;
  created_at: string;
}

export interface Message {
  role: 'user' | 'assistant' | 'agent';
  content: string;
  created_at: string;
}

export interface Conversation {
  conversation_id: string;
  chatbot_id: string;
  session_id: string;
  source: string;
  escalated_at: string | null;
  taken_over_by: string | null;
}

export interface ConversationSummary extends Conversation {
  last_message: Message | null;
  last_activity_at: string;
}

export interface Transcript extends Conversation {
  messages: Message[];
}

/** A chatbot's WhatsApp link, as `channel whatsapp --status` prints it, with the QR code drawn. */
export interface WhatsAppStatus {
  chatbot_id: string;
  state: 'linking' | 'linked' | 'unlinked';
  phone: string | null;
  jid: string | null;
  qr: string | null;
  pairing_code: string | null;
  reason: string | null;
  updated_at: string;
  qr_image: string | null;
}

export interface TelegramStatus {
  mode: 'webhook' | 'polling';
  webhook_path: string | null;
  secret_token: string | null;
  bot_username: string | null;
}

/** `GET /chatbots/:id/channels`: the messaging channels' connections (null where there is none). */
export interface Channels {
  telegram: TelegramStatus | null;
  whatsapp: WhatsAppStatus | null;
}

export interface Agent {
  id: string;
  name: string;
  created_at: string;
  active: boolean;
}

export interface Usage {
  plan: string;
  month: string;
  used: number;
  limit: number | null;
  days: Array<{ date: string; messages: number }>;
}

export interface Retrieved {
  engine: string;
  results: Array<{
    rank: number;
    score: number;
    chunk_id: string;
    source_id: string;
    title: string;
    url: string;
    content: string;
  }>;
}

/** `GET /knowledge`: the embedding space the chatbots answer from, and a re-embedding into another. */
export interface KnowledgeStatus {
  space: string | null;
  embeddings: string | null;
  migration: {
    from: string;
    to: string;
    embeddings: string;
    phase: 'copying' | 'switched' | 'done' | 'failed';
    done: number;
    total: number;
    started_at: string;
    updated_at: string;
    error: string | null;
  } | null;
}
