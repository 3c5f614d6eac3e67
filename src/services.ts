import { Handoffs } from './conversations/handoffs.ts';
import { FeedbackStore } from './store/feedback-store.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { ConversationControl } from './conversations/conversation-control.ts';
import type { EventSink } from './webhooks/webhook-event.ts';
import { TelegramReplies } from './channels/telegram/outbound.ts';
import { VisitorDelivery } from './channels/visitor-delivery.ts';
import type { Logger } from './logger.ts';
import { AccountStore } from './store/account-store.ts';
import { ApiKeyStore } from './store/api-key-store.ts';
import { ChatbotStore } from './store/chatbot-store.ts';
import { ConversationStore } from './store/conversation-store.ts';
import { QuotaStore } from './admission/quota-store.ts';
import type { RedisClient } from './redis/redis-client.ts';
import { RedisKeys } from './redis/redis-keys.ts';
import { RequestGate } from './admission/request-gate.ts';
import { SourceIntake } from './sources/source-intake.ts';
import { DeliveryStore } from './store/delivery-store.ts';
import { IngestionQueue } from './store/ingestion-queue.ts';
import { SignalBus } from './redis/signal-bus.ts';
import { WebhookStore } from './store/webhook-store.ts';
import { EventRelay } from './webhooks/event-relay.ts';
import { WebhookOutbox } from './webhooks/webhook-outbox.ts';
import { PendingEventStore } from './store/pending-event-store.ts';
import { LeadCapture } from './leads/lead-capture.ts';
import { PreviewSessionStore } from './store/preview-session-store.ts';
import { WIDGET_SESSION_TTL_SECONDS } from './channels/widget/config.ts';
import { AgentPresence } from './store/agent-presence.ts';
import { AgentStore } from './store/agent-store.ts';
import { CannedReplyStore } from './store/canned-reply-store.ts';
import { LeadStore } from './store/lead-store.ts';
import { SourceStore } from './store/source-store.ts';
import { TelegramStore } from './channels/telegram/telegram-store.ts';
import { WhatsAppStore } from './channels/whatsapp/whatsapp-store.ts';
import { WhatsAppLinker } from './channels/whatsapp/linker.ts';
import { WhatsAppCloudStore } from './channels/whatsapp/cloud/cloud-store.ts';
import { GraphApi } from './channels/whatsapp/cloud/graph-api.ts';
import { CloudDelivery } from './channels/whatsapp/cloud/cloud-delivery.ts';
import { WhatsAppCloudConnector } from './channels/whatsapp/cloud/cloud-connector.ts';
import { ChatbotDeletion } from './chatbots/chatbot-deletion.ts';
import { OwnerAuth } from './dashboard/owner-auth.ts';
import { TelegramConnector } from './channels/telegram/connector.ts';
import { InviteStore } from './store/invite-store.ts';
import { SetupStore } from './store/setup-store.ts';
import { LoginGate } from './admission/login-gate.ts';
import { assertPublicDestination, systemEgress, type Egress } from './net/ssrf-guard.ts';
import { PasswordStore } from './store/password-store.ts';
import { SessionStore } from './store/session-store.ts';
import { ConnectionStore } from './store/connection-store.ts';
import { GatewayPresence } from './store/gateway-presence.ts';
import { EmbeddingSpaceStore } from './store/embedding-space-store.ts';
import { SecretKeyring } from './connections/secret-keyring.ts';
import { ConnectionCredentials } from './connections/connection-credentials.ts';
import { oauthClients, type OAuthClient } from './connections/oauth-clients.ts';
import { OAuthFlow } from './connections/oauth-flow.ts';
import { ProcessLease } from './redis/process-lease.ts';
import { connectorBaseUrls } from './sources/connectors/connector-settings.ts';
import { createConnectorHttp, type ConnectorHttp } from './sources/connectors/connector-http.ts';
import type { ConnectionService } from './sources/connectors/connector.ts';
import { UnansweredStore } from './store/unanswered-store.ts';
import { UnansweredRecorder } from './unanswered/unanswered-recorder.ts';
import { AnswerImprover } from './unanswered/answer-improver.ts';
import { createEmbedder } from './rag/retrieval-setup.ts';
import { RetentionSchedule } from './store/retention-schedule.ts';
import { ErasureStore } from './store/erasure-store.ts';
import { ConversationErasure } from './retention/conversation-erasure.ts';
import { TransferStore } from './store/transfer-store.ts';
import { QueryEmbedder, type QuestionEmbedder } from './rag/query-embedder.ts';

/** The service layer shared by the HTTP API and the CLI: one implementation of every rule. */
export interface Services {
  accounts: AccountStore;
  apiKeys: ApiKeyStore;
  chatbots: ChatbotStore;
  sources: SourceStore;
  gate: RequestGate;
  quota: QuotaStore;
  conversations: ConversationStore;
  control: ConversationControl;
  /** Conversations' hand-off states as their visitors see them (AI, waiting for a human, a named agent). */
  handoffs: Handoffs;
  /** Hands a push (a reply, typing, a notice) to a session's visitor, from any process, on any channel. */
  visitors: VisitorDelivery;
  signals: SignalBus;
  webhooks: WebhookStore;
  deliveries: DeliveryStore;
  outbox: WebhookOutbox;
  /** Writes the deliveries of events recorded with what they report (and of those left pending). */
  relay: EventRelay;
  ingestion: IngestionQueue;
  intake: SourceIntake;
  /** Users' connections to knowledge services; their secrets sealed with the deployment's key. */
  connections: ConnectionStore;
  keyring: SecretKeyring;
  /** Access tokens of connections, refreshed once across gateways. */
  credentials: ConnectionCredentials;
  /** The OAuth clients the configuration names, by service. */
  oauthClients: Partial<Record<ConnectionService, OAuthClient>>;
  /** Connecting a service with OAuth (dashboard and CLI). */
  oauth: OAuthFlow;
  /** Which gateway processes are running, and the address they publish (for the CLI). */
  gateways: GatewayPresence;
  /** The embedding space the gateways serve, and the re-embedding into another one. */
  spaces: EmbeddingSpaceStore;
  /** How connectors and token requests reach services: SSRF guard, redirects, Retry-After. */
  connectorHttp: ConnectorHttp;
  leads: LeadStore;
  leadCapture: LeadCapture;
  /** Visitors' ratings of AI replies. */
  feedback: FeedbackStore;
  /** The unanswered-questions inbox of each chatbot. */
  unanswered: UnansweredStore;
  /** Records questions into the inbox, off the turns that noted them. */
  unansweredRecorder: UnansweredRecorder;
  /** Turns an owner's answer into a text source and resolves its question. */
  improver: AnswerImprover;
  /** The widget sessions of the dashboard's preview, to mark their conversations. */
  previews: PreviewSessionStore;
  presence: AgentPresence;
  agents: AgentStore;
  /** Owners' canned replies for their agents. */
  cannedReplies: CannedReplyStore;
  telegram: TelegramStore;
  whatsapp: WhatsAppStore;
  /** Links and unlinks chatbots' WhatsApp accounts (CLI and dashboard). */
  whatsappLinker: WhatsAppLinker;
  /** Chatbots' WhatsApp Business Cloud API connections, windows and reply statuses. */
  whatsappCloud: WhatsAppCloudStore;
  /** Meta's Graph API, pinned to GRAPH_API_VERSION, behind the SSRF guard. */
  graph: GraphApi;
  /** Pushes to WhatsApp chats on the Cloud API, from any process. */
  whatsappCloudDelivery: CloudDelivery;
  /** Connects and disconnects chatbots' WhatsApp Cloud API numbers (CLI and dashboard). */
  whatsappCloudConnector: WhatsAppCloudConnector;
  /** Connects and disconnects chatbots' Telegram bots (CLI and dashboard). */
  telegramConnector: TelegramConnector;
  /** Deletes a chatbot, disconnecting its messaging channels first. */
  chatbotDeletion: ChatbotDeletion;
  /** When each chatbot's retention sweep is due, claimed by one gateway at a time. */
  retention: RetentionSchedule;
  /** Deletes conversations and leads with everything keyed by them (retention and erasure). */
  erasure: ErasureStore;
  /** A visitor's erasure request: their conversation and the lead it left. */
  conversationErasure: ConversationErasure;
  /** Conversations read whole for `export` and written as they were by `import`. */
  transfer: TransferStore;
  keys: RedisKeys;
  /** Dashboard sessions (cookies) and the owners' sign-in. */
  sessions: SessionStore;
  ownerAuth: OwnerAuth;
}

/** Dashboard sessions end after a week unused, and 30 days after sign-in at the latest. */
const SESSION_LIFETIME = { idleMs: 7 * 24 * 3600 * 1000, maxAgeMs: 30 * 24 * 3600 * 1000 };

/**
 * Builds the service layer over one Redis client. `events` replaces the outbox, `egress` the system's
 * resolver and agents (tests only).
 */
export function createServices(
  redis: RedisClient,
  config: Config,
  clock: Clock,
  logger: Logger,
  eventsOverride?: EventSink,
  egress: Egress = systemEgress,
): Services {
  const keys = new RedisKeys(config.REDIS_PREFIX);
  const webhooks = new WebhookStore(redis, keys, clock, config.WEBHOOK_ALLOW_PRIVATE, egress);
  const deliveries = new DeliveryStore(redis, keys, clock, config.WEBHOOK_LOG_RETENTION_DAYS);
  const outbox = new WebhookOutbox(webhooks, deliveries, config.WEBHOOK_RETRY_DELAYS);
  const events = eventsOverride ?? outbox;
  const sources = new SourceStore(redis, keys, clock);
  const keyring = new SecretKeyring({ redis, keys, secretKey: config.SECRET_KEY, dataDir: config.DATA_DIR, logger });
  const connections = new ConnectionStore(redis, keys, clock, keyring);
  const baseUrls = connectorBaseUrls(config);
  const clients = oauthClients(config, baseUrls);
  const connectorHttp = createConnectorHttp({
    baseUrls,
    allowPrivate: config.CRAWL_ALLOW_PRIVATE,
    egress,
    timeoutMs: 30_000,
    maxBytes: config.CONNECTOR_MAX_DOCUMENT_BYTES,
    retries: 3,
    maxRetryAfterMs: 60_000,
  });
  const ingestion = new IngestionQueue(redis, keys);
  const apiKeys = new ApiKeyStore(redis, keys, clock);
  const pending = new PendingEventStore(redis, keys, clock, config.PENDING_EVENT_GRACE_MS);
  const conversations = new ConversationStore(redis, keys, clock, pending);
  const relay = new EventRelay(pending, events, logger, clock);
  const signals = new SignalBus(redis, keys, logger);
  const leads = new LeadStore(redis, keys);
  const telegram = new TelegramStore(redis, keys);
  const whatsapp = new WhatsAppStore(redis, keys, clock);
  const whatsappCloud = new WhatsAppCloudStore(redis, keys, clock, keyring);
  const whatsappLinker = new WhatsAppLinker({ store: whatsapp, signals, cloud: whatsappCloud });
  const graph = new GraphApi({
    baseUrl: config.GRAPH_API_BASE_URL,
    version: config.GRAPH_API_VERSION,
    allowPrivate: config.CRAWL_ALLOW_PRIVATE,
    egress,
    clock,
    firstRetryMs: config.GRAPH_API_RETRY_MS,
  });
  const whatsappCloudDelivery = new CloudDelivery({ store: whatsappCloud, graph, clock, logger });
  const telegramConnector = new TelegramConnector({ store: telegram, signals, apiRoot: config.TELEGRAM_API_ROOT });
  const retention = new RetentionSchedule(redis, keys);
  const erasure = new ErasureStore(redis, keys);
  const chatbots = new ChatbotStore(redis, keys, clock, retention);
  const visitors = new VisitorDelivery({
    signals,
    telegram: new TelegramReplies(telegram, { apiRoot: config.TELEGRAM_API_ROOT }),
    whatsappCloud: whatsappCloudDelivery,
  });
  const agents = new AgentStore(redis, keys, clock, signals);
  const presence = new AgentPresence(redis, keys, clock);
  const handoffs = new Handoffs({ conversations, chatbots, agents, presence, clock });
  const accounts = new AccountStore(redis, keys, clock, Object.keys(config.PLAN_QUOTAS));
  const spaces = new EmbeddingSpaceStore(redis, keys);
  const unanswered = new UnansweredStore(redis, keys, clock);
  const unansweredRecorder = new UnansweredRecorder({
    store: unanswered,
    conversations,
    logger,
    clock,
    embedder: servedEmbedder(config, spaces),
  });
  const sessions = new SessionStore(redis, keys, clock, SESSION_LIFETIME);
  const gateways = new GatewayPresence(redis, keys, clock);
  const quota = new QuotaStore(redis, keys, clock, config.PLAN_QUOTAS);
  const loginGate = new LoginGate(redis, keys, {
    perEmailAndAddress: config.LOGIN_ATTEMPTS_PER_EMAIL,
    perAddress: config.LOGIN_ATTEMPTS_PER_ADDRESS,
    windowMs: 15 * 60 * 1000,
    concurrentPerAddress: config.LOGIN_CONCURRENT_PER_ADDRESS,
    // Far longer than a check takes (a queued one waits for at most two rounds of scrypt).
    inFlightMs: 60 * 1000,
  });
  const intake = new SourceIntake({
    sources,
    queue: ingestion,
    clock,
    accounts,
    connections,
    // The gateways' crawler policy decides, also for the CLI (whose own setting counts only until
    // a gateway has published theirs): they are the ones that will fetch the URL.
    checkDestination: async (url) =>
      assertPublicDestination(url, (await gateways.crawlAllowsPrivate()) ?? config.CRAWL_ALLOW_PRIVATE, egress),
  });
  return {
    accounts,
    apiKeys,
    chatbots,
    sources,
    gate: new RequestGate(
      redis,
      keys,
      apiKeys,
      quota,
      {
        limit: config.RATE_LIMIT_PER_MINUTE,
        windowMs: config.RATE_LIMIT_WINDOW_MS,
      },
      clock,
    ),
    quota,
    conversations,
    visitors,
    control: new ConversationControl({
      conversations,
      relay,
      signals,
      visitors,
      handoffs,
      logger,
      unanswered: unansweredRecorder,
    }),
    handoffs,
    signals,
    webhooks,
    deliveries,
    outbox,
    relay,
    ingestion,
    intake,
    improver: new AnswerImprover({ store: unanswered, recorder: unansweredRecorder, intake, conversations }),
    connections,
    keyring,
    credentials: new ConnectionCredentials({
      connections,
      lease: new ProcessLease(redis),
      keys,
      clock,
      logger,
      oauth: clients,
    }),
    oauthClients: clients,
    oauth: new OAuthFlow({ redis, keys, connections, clients, clock, http: connectorHttp }),
    connectorHttp,
    gateways,
    spaces,
    leads,
    leadCapture: new LeadCapture({ leads, relay, clock, signals }),
    feedback: new FeedbackStore(redis, keys),
    unanswered,
    unansweredRecorder,
    previews: new PreviewSessionStore(redis, keys, WIDGET_SESSION_TTL_SECONDS),
    presence,
    agents,
    cannedReplies: new CannedReplyStore(redis, keys, clock, signals),
    telegram,
    whatsapp,
    whatsappLinker,
    whatsappCloud,
    graph,
    whatsappCloudDelivery,
    whatsappCloudConnector: new WhatsAppCloudConnector({
      store: whatsappCloud,
      graph,
      linker: whatsappLinker,
      // The gateways' address: this process's own, else the one they publish (the CLI has none).
      publicUrl: async () => config.PUBLIC_URL ?? (await gateways.publicUrl()),
    }),
    telegramConnector,
    chatbotDeletion: new ChatbotDeletion({
      chatbots,
      sources,
      ingestion,
      whatsapp: whatsappLinker,
      whatsappCloud,
      telegram: telegramConnector,
    }),
    retention,
    erasure,
    conversationErasure: new ConversationErasure({ store: erasure, logger }),
    transfer: new TransferStore(redis, keys, conversations),
    keys,
    sessions,
    ownerAuth: new OwnerAuth({
      accounts,
      passwords: new PasswordStore(redis, keys),
      sessions,
      invites: new InviteStore(redis, keys, clock),
      setup: new SetupStore(redis, keys),
      loginGate,
      defaultPlan: config.DEFAULT_PLAN,
    }),
  };
}

/**
 * The question embedder of the space the gateways serve, opened when first needed (the CLI records an
 * escalation's question with it; a gateway replaces it with its served retrieval's).
 */
function servedEmbedder(config: Config, spaces: EmbeddingSpaceStore): () => Promise<QuestionEmbedder> {
  let opened: Promise<QuestionEmbedder> | undefined;
  return () =>
    (opened ??= spaces
      .active()
      .then(
        (served) => new QueryEmbedder(createEmbedder(served ? { ...config, EMBEDDINGS: served.embeddings } : config)),
      ));
}
