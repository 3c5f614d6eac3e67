import { z } from 'zod';
import { TrustedProxies, TrustedProxiesError } from './net/trusted-proxies.ts';

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const bool01 = z.enum(['0', '1']).transform((value) => value === '1');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const url = (protocols: string[]) =>
  z.url().refine((value) => protocols.includes(new URL(value).protocol), {
    message: `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`,
  });

/** One Redis URL, or a Redis Cluster's seed nodes separated by commas. */
const redisUrls = z.string().transform((value, ctx) => {
  const urls = value.split(',').map((part) => part.trim());
  for (const candidate of urls) {
    let protocol: string | undefined;
    try {
      protocol = new URL(candidate).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') {
      ctx.addIssue({ code: 'custom', message: 'must be a redis:// or rediss:// URL, or several separated by commas' });
      return z.NEVER;
    }
  }
  return urls;
});

const planQuotas = z.string().transform((value, ctx) => {
  const quotas: Record<string, number> = {};
  for (const entry of value.split(',')) {
    const match = /^\s*([a-z][a-z0-9_-]*)\s*=\s*(\d+)\s*$/.exec(entry);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not plan=amount` });
      return z.NEVER;
    }
    quotas[match[1]!] = Number(match[2]);
  }
  return quotas;
});

const retryDelays = z.string().transform((value, ctx) => {
  const delays = value.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((d) => !Number.isFinite(d) || d < 0)) {
    ctx.addIssue({ code: 'custom', message: 'must be comma-separated seconds' });
    return z.NEVER;
  }
  return delays;
});

const trustedProxies = z.string().transform((value, ctx) => {
  try {
    return TrustedProxies.parse(value);
  } catch (error) {
    if (!(error instanceof TrustedProxiesError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

// W3C baggage-style `key=value` pairs, values percent-encoded (the OTLP exporters' header format).
const otlpHeaders = z.string().transform((value, ctx) => {
  const headers: Record<string, string> = {};
  for (const entry of value.split(',')) {
    const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(.*?)\s*$/.exec(entry);
    let decoded: string | undefined;
    try {
      decoded = match ? decodeURIComponent(match[2]!) : undefined;
    } catch {
      decoded = undefined;
    }
    if (!match || decoded === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated name=value pairs' });
      return z.NEVER;
    }
    headers[match[1]!] = decoded;
  }
  return headers;
});

const embeddings = z.string().regex(/^(local|(openai|gemini|ollama):\S+)$/, {
  message: 'must be local, openai:<model>, gemini:<model> or ollama:<model>',
});

const schema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: url(['http:', 'https:']).optional(),
  /** One server, or (several URLs, or REDIS_CLUSTER=1) a Redis Cluster reached through these seed nodes. */
  REDIS_URL: redisUrls.optional(),
  REDIS_CLUSTER: bool01.default(false),
  /**
   * Replicas every script's writes wait for (WAIT) before they are acknowledged, so that a failover
   * loses none of them; 0: Redis's asynchronous replication alone.
   */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(5).default(0),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,32}$/, { message: 'must be 1-32 characters of [A-Za-z0-9_:.-]' })
    .default('sb:'),
  DATA_DIR: z.string().min(1).default('./data'),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: url(['http:', 'https:']).optional(),
  GEMINI_API_KEY: z.string().optional(),
  GEMINI_BASE_URL: url(['http:', 'https:']).optional(),
  OLLAMA_HOST: url(['http:', 'https:']).optional(),
  EMBEDDINGS: embeddings.default('local'),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  RATE_LIMIT_WINDOW_MS: positiveInt.default(60_000),
  CONVERSATION_RATE_LIMIT: positiveInt.default(20),
  CONVERSATION_RATE_WINDOW_MS: positiveInt.default(60_000),
  LLM_TIMEOUT_MS: positiveInt.default(60_000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(5).default(1),
  /** Reply suggestions one agent may ask for per minute (each a billed LLM call), counted across gateways. */
  AGENT_SUGGESTIONS_PER_MINUTE: positiveInt.default(10),
  PLAN_QUOTAS: planQuotas.default({ free: 100, hobby: 2000, standard: 10000, scale: 40000 }),
  /** The plan of an account created without one (`user create` without `--plan`). */
  DEFAULT_PLAN: z.string().min(1).default('free'),
  CONVERSATION_IDLE_MS: positiveInt.default(600_000),
  /**
   * How long a gateway holds a conversation while it works on a turn (renewed every third of it); a
   * gateway that dies lets it lapse after this long and another one continues the conversation.
   */
  CONVERSATION_LEASE_MS: positiveInt.default(30_000),
  /**
   * How long the webhook events of a stored message, escalation or lead may wait for their deliveries
   * to be written before another gateway writes them (the writer died in between).
   */
  PENDING_EVENT_GRACE_MS: positiveInt.default(10_000),
  SEARCH_ENGINE: z.enum(['auto', 'redis', 'in-process']).default('auto'),
  CRAWL_ALLOW_PRIVATE: bool01.default(false),
  /** Pages one crawl of a url source keeps at most. */
  CRAWL_MAX_PAGES: positiveInt.max(10_000).default(200),
  REDIS_QUERY_URL: url(['redis:', 'rediss:']).optional(),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_RETRY_DELAYS: retryDelays.default([60, 300, 900]),
  WEBHOOK_ALLOW_PRIVATE: bool01.default(false),
  WEBHOOK_CONCURRENCY: positiveInt.default(64),
  WEBHOOK_DESTINATION_CONCURRENCY: positiveInt.default(8),
  WEBHOOK_LOG_RETENTION_DAYS: positiveInt.default(30),
  WEBHOOK_POLL_MS: positiveInt.default(250),
  SOCKET_HEARTBEAT_MS: positiveInt.default(30_000),
  SOCKET_SEND_BUFFER_BYTES: positiveInt.default(1024 * 1024),
  /**
   * Frames one socket (widget or agent) may send per second on average, and at once; frames over
   * the rate are dropped (the first with an error frame), and a socket that runs a whole burst into
   * debt is closed with 1008.
   */
  SOCKET_FRAME_RATE: positiveInt.default(10),
  SOCKET_FRAME_BURST: positiveInt.default(30),
  /** Frames of one socket waiting to be handled at which the gateway stops reading from it. */
  SOCKET_INBOUND_QUEUE: positiveInt.default(16),
  /** New sockets one client address may open per window, counted in Redis across every gateway. */
  SOCKET_OPENS_PER_ADDRESS: positiveInt.default(120),
  SOCKET_OPENS_WINDOW_MS: positiveInt.default(60_000),
  WIDGET_NEW_SESSIONS_PER_ADDRESS: positiveInt.default(100),
  WIDGET_NEW_SESSIONS_WINDOW_MS: positiveInt.default(3_600_000),
  TELEGRAM_API_ROOT: url(['http:', 'https:']).optional(),
  /** How long a gateway may long-poll a Telegram bot before renewing its lease (others take over after). */
  TELEGRAM_POLLER_LEASE_MS: positiveInt.default(30_000),
  /** How long a gateway may run a chatbot's WhatsApp socket before renewing its lease (others take over after). */
  WHATSAPP_SOCKET_LEASE_MS: positiveInt.default(30_000),
  /**
   * The WhatsApp Business Cloud API: Meta's Graph API root (tests and air-gapped installs point it
   * elsewhere; every call still passes the SSRF guard unless CRAWL_ALLOW_PRIVATE=1), the Graph API
   * version every call is pinned to, and the first wait before a throttled or failed call is tried
   * again (doubling, unless Meta says how long in Retry-After).
   */
  GRAPH_API_BASE_URL: url(['http:', 'https:']).default('https://graph.facebook.com'),
  GRAPH_API_VERSION: z
    .string()
    .regex(/^v\d{1,3}\.\d{1,2}$/, { message: 'must be a Graph API version like v26.0' })
    .default('v26.0'),
  GRAPH_API_RETRY_MS: positiveInt.default(1000),
  /** How long a gateway may re-embed into a new embedding space before renewing its lease (another resumes after). */
  REEMBED_LEASE_MS: positiveInt.default(30_000),
  /**
   * How long a gateway may ingest one source before renewing its lease: another claims the source
   * after it lapses, and the first stops that source's run as soon as it learns so.
   */
  INGEST_LEASE_MS: positiveInt.default(60_000),
  /** How often each gateway looks for chatbots whose retention sweep is due. */
  RETENTION_POLL_MS: positiveInt.default(60_000),
  /** How long a gateway holds one chatbot's sweep unless renewed (after every batch); another takes it after. */
  RETENTION_LEASE_MS: positiveInt.default(60_000),
  /** The time from one retention sweep of a chatbot to its next. */
  RETENTION_INTERVAL_MS: positiveInt.default(3_600_000),
  /** Conversations or leads one sweep deletes between two renewals of its lease. */
  RETENTION_BATCH: positiveInt.max(10_000).default(100),
  /**
   * Failed dashboard sign-ins allowed in 15 minutes for one email address from one client address
   * (another client's failures never lock the right password out), and from one client address.
   */
  LOGIN_ATTEMPTS_PER_EMAIL: positiveInt.default(10),
  LOGIN_ATTEMPTS_PER_ADDRESS: positiveInt.default(50),
  /** Sign-ins one client address may have being checked at once, across every gateway. */
  LOGIN_CONCURRENT_PER_ADDRESS: positiveInt.default(2),
  /**
   * Reverse proxies whose X-Forwarded-For is believed (IPs, CIDR ranges, `private`); by default
   * nobody's, so the client address is the socket's peer.
   */
  TRUSTED_PROXIES: trustedProxies.default(TrustedProxies.none),
  /**
   * Encrypts connection secrets at rest (AES-256-GCM): 32 bytes as base64 or hex. Unset, a key is
   * generated into DATA_DIR on first start; several gateways must then be given that same key.
   */
  SECRET_KEY: z.string().optional(),
  /** Connector base URLs (tests and air-gapped installs point the SDKs elsewhere). */
  GOOGLE_API_BASE_URL: url(['http:', 'https:']).optional(),
  GOOGLE_OAUTH_BASE_URL: url(['http:', 'https:']).optional(),
  NOTION_BASE_URL: url(['http:', 'https:']).optional(),
  DROPBOX_API_BASE_URL: url(['http:', 'https:']).optional(),
  DROPBOX_CONTENT_BASE_URL: url(['http:', 'https:']).optional(),
  MICROSOFT_GRAPH_BASE_URL: url(['http:', 'https:']).optional(),
  MICROSOFT_LOGIN_BASE_URL: url(['http:', 'https:']).optional(),
  GITBOOK_API_BASE_URL: url(['http:', 'https:']).optional(),
  YOUTUBE_BASE_URL: url(['http:', 'https:']).optional(),
  /** OAuth clients of the services connected through the dashboard. */
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  DROPBOX_APP_KEY: z.string().optional(),
  DROPBOX_APP_SECRET: z.string().optional(),
  MICROSOFT_CLIENT_ID: z.string().optional(),
  MICROSOFT_CLIENT_SECRET: z.string().optional(),
  MICROSOFT_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,64}$/, { message: 'must be a tenant id or domain, or common' })
    .default('common'),
  /** Largest document a connector downloads, and most documents read behind one source. */
  CONNECTOR_MAX_DOCUMENT_BYTES: positiveInt.default(20 * 1024 * 1024),
  CONNECTOR_MAX_DOCUMENTS: positiveInt.default(500),
  /**
   * Prometheus metrics: served on their own port (bound to METRICS_HOST, loopback by default) when
   * METRICS_PORT is set, and on the public port behind this bearer token when METRICS_TOKEN is set;
   * neither set, no metrics are collected at all. The token, when set, is asked for on both.
   */
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, { message: 'must be at least 16 printable characters without spaces' })
    .optional(),
  /**
   * OpenTelemetry traces, exported over OTLP/HTTP (JSON) to `<endpoint>/v1/traces` when set; unset, the
   * SDK is not even loaded. The exporter also reads OpenTelemetry's other standard OTEL_EXPORTER_OTLP_*
   * variables itself (timeout, compression, certificates).
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('switchboard'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** The whole validated configuration. */
export type Config = z.output<typeof schema>;

/**
 * Reads and validates the configuration. The only reader of `process.env`.
 * Empty strings count as unset, so `FOO=` in an env file falls back to the default.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name in schema.shape && value !== ''),
  );
  const result = schema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0]);
    throw new ConfigError(`Invalid ${variable}: ${issue.message}`);
  }
  if (!('scale' in result.data.PLAN_QUOTAS)) {
    throw new ConfigError('Invalid PLAN_QUOTAS: must define the scale plan');
  }
  // Checked only when set: PLAN_QUOTAS without a free plan stays valid, as before DEFAULT_PLAN.
  if ('DEFAULT_PLAN' in present && !(result.data.DEFAULT_PLAN in result.data.PLAN_QUOTAS)) {
    const plans = Object.keys(result.data.PLAN_QUOTAS).join(', ');
    throw new ConfigError(`Invalid DEFAULT_PLAN: must be one of the plans of PLAN_QUOTAS (${plans})`);
  }
  return result.data;
}
