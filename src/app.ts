import type { Server } from 'restify';
import { ConversationRouter } from './actors/conversation-router.ts';
import { ingestionWorkerFor, type IngestionWorker } from './sources/ingestion-worker.ts';
import { randomUUID } from 'node:crypto';
import { ConnectorReader } from './sources/connector-reader.ts';
import { connectorLimits } from './sources/connectors/connector-settings.ts';
import { dispatcherFromConfig, type WebhookDispatcher } from './actors/webhook-dispatcher.ts';
import { systemClock, type Clock } from './clock.ts';
import { TurnPipeline } from './conversations/turn-pipeline.ts';
import { ReplyStream } from './conversations/reply-stream.ts';
import { relevanceFloor } from './rag/relevance-floor.ts';
import type { Config } from './config.ts';
import type { EventSink } from './webhooks/webhook-event.ts';
import { closeGracefully, createHttpServer, listen } from './http/http-server.ts';
import { callableProviders, gatewaySetup } from './startup.ts';
import { ProviderCheck } from './llm/provider-check.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerPublicApi } from './http/public-api.ts';
import { SocketServer } from './http/socket-server.ts';
import { WebBundles } from './http/web-bundle.ts';
import { registerWidgetRoutes } from './channels/widget/routes.ts';
import { WidgetAdapter } from './channels/widget/adapter.ts';
import { WIDGET_SESSION_TTL_SECONDS, WIDGET_SOCKET_PATH } from './channels/widget/config.ts';
import { WidgetOutbound } from './channels/widget/outbound.ts';
import { WidgetSessionStore } from './channels/widget/widget-session-store.ts';
import { SocketOpenGate } from './admission/socket-open-gate.ts';
import { AgentHub } from './agents/agent-hub.ts';
import { AgentSocket } from './agents/agent-socket.ts';
import { ReplySuggester } from './agents/reply-suggester.ts';
import { SuggestionGate } from './admission/suggestion-gate.ts';
import { registerAgentRoutes } from './http/agent-routes.ts';
import { registerDashboard } from './http/dashboard-routes.ts';
import { registerTelegramRoutes } from './channels/telegram/routes.ts';
import { TelegramChannel } from './channels/telegram/adapter.ts';
import { WhatsAppChannel } from './channels/whatsapp/adapter.ts';
import { WhatsAppCloudAdapter } from './channels/whatsapp/cloud/cloud-adapter.ts';
import { registerWhatsAppCloudRoutes } from './channels/whatsapp/cloud/routes.ts';
import { baileysSocketFactory, type WhatsAppSocketFactory } from './channels/whatsapp/socket.ts';
import { createLlmProviders, type LlmProviders } from './llm/llm-providers.ts';
import type { Logger } from './logger.ts';
import type { Egress } from './net/ssrf-guard.ts';
import type { Retriever } from './rag/retriever.ts';
import { NotFoundError } from './errors.ts';
import { createEmbedder, openRetrieval, settleEmbeddingSpace } from './rag/retrieval-setup.ts';
import { ServedRetrieval } from './rag/served-retrieval.ts';
import type { ChatbotLoadsOptions, LoadProgress } from './rag/chatbot-loads.ts';
import { TurnRetrieval } from './rag/turn-retrieval.ts';
import { createSearchIndex } from './rag/redis-search-engine.ts';
import {
  endAbandonedMigration,
  SPACE_MIGRATION_OPTIONS,
  SpaceMigration,
  type SpaceMigrationOptions,
} from './rag/space-migration.ts';
import type { SpaceSetting } from './store/embedding-space-store.ts';
import { routeSignal } from './signal-routing.ts';
import type { Signal } from './redis/signal-bus.ts';
import type { StoredMessage } from './store/conversation-store.ts';
import { ReplyStreamGate } from './reply-stream-gate.ts';
import { RetentionWorker } from './retention/retention-worker.ts';
import { createServices, type Services } from './services.ts';
import { openRedis, plainConnection, type RedisHandle } from './redis/redis-client.ts';
import { startTelemetry, type Telemetry } from './metrics/telemetry.ts';
import { observeHttpRequests } from './metrics/http-request-metrics.ts';
import { registerGatewayGauges } from './metrics/gateway-gauges.ts';
import { MetricsAccess, MetricsServer, registerMetricsRoute } from './metrics/metrics-endpoint.ts';
import type { TurnObserver } from './metrics/turn-observer.ts';

/** The agents' socket. */
const AGENT_SOCKET_PATH = '/agents/v1/socket';

/** How long a gateway counts as running after it last said so (it says so every third of it). */
const GATEWAY_PRESENCE_TTL_MS = 15_000;

/** A running gateway. */
export interface App {
  readonly port: number;
  /** The HTTP server with every route (tests enumerate them). */
  readonly http: Server;
  readonly services: Services;
  readonly router: ConversationRouter;
  readonly dispatcher: WebhookDispatcher;
  readonly retrieval: ServedRetrieval;
  /** The re-embedding this gateway runs, when it was started with another EMBEDDINGS than the gateways serve. */
  readonly migration: SpaceMigration | undefined;
  readonly ingestion: IngestionWorker;
  /** Deletes conversations and leads past their chatbot's retention. */
  readonly retention: RetentionWorker;
  readonly sockets: SocketServer;
  readonly whatsapp: WhatsAppChannel;
  /** Metrics and traces (tests flush the traces). */
  readonly telemetry: Telemetry;
  /** The separate metrics port, when METRICS_PORT is set. */
  readonly metricsPort: number | undefined;
  stop(): Promise<void>;
}

/** Injected collaborators; tests pass a simulated clock, recording sinks or other providers. */
export interface AppOptions {
  clock?: Clock;
  /** How long in-flight requests may take to finish at shutdown. */
  shutdownGraceMs?: number;
  providers?: LlmProviders;
  retriever?: Retriever;
  events?: EventSink;
  /** Makes WhatsApp sockets (tests pass fakes); Baileys' real sockets otherwise. */
  whatsappSockets?: WhatsAppSocketFactory;
  /** The first WhatsApp reconnect delay (tests shorten it). */
  whatsappReconnectMs?: number;
  /** The re-embedding's lease, waits and batch (tests shorten them). */
  spaceMigration?: Partial<SpaceMigrationOptions>;
  /** How webhooks, crawls and connectors resolve and reach hosts (tests: a fake resolver); the system's otherwise. */
  egress?: Egress;
  /** Makes each prompt's reference-fence nonce (tests fix it to assert exact prompts); random otherwise. */
  fenceNonce?: () => string;
  /** How long ended spans wait to be exported in a batch (tests shorten it); the SDK's 5 s otherwise. */
  traceDelayMs?: number;
  /** The in-process search index's background load: its batch size, and its pace (tests hold it). */
  searchIndexLoading?: Pick<ChatbotLoadsOptions, 'batchSize' | 'pace'>;
}

/**
 * The composition root: wires Redis, the service layer, the conversation actors and the HTTP
 * server, starts them in dependency order and stops them in reverse.
 */
export async function startApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const clock = options.clock ?? systemClock;
  const handle: RedisHandle = await openRedis(config, logger);
  const stack: Array<() => Promise<void> | void> = [() => handle.close()];
  const unwind = async () => {
    for (const stop of stack.reverse()) await stop();
  };
  try {
    const gatewayId = randomUUID();
    const telemetry = await startTelemetry(config, {
      clock,
      logger,
      instanceId: gatewayId,
      traceDelayMs: options.traceDelayMs,
    });
    // Unwound after everything else: the spans of the shutdown are exported too.
    stack.push(() => telemetry.stop());
    const services = createServices(handle.redis, config, clock, logger, options.events, options.egress);
    // Unwound after the conversation actors: the questions their last turns noted are recorded first.
    stack.push(() => services.unansweredRecorder.settled());
    // The CLI's url source check follows the crawler policy of the gateways, which fetch the URLs.
    await services.gateways.publishCrawlAllowsPrivate(config.CRAWL_ALLOW_PRIVATE);
    // Opens (or generates) the key connection secrets are sealed with now, so a missing or
    // mismatched SECRET_KEY is reported at start rather than at the first connector source.
    await services.keyring
      .box()
      .catch((error: unknown) => logger.error({ err: error }, 'connection secrets cannot be opened'));
    const dispatcher = dispatcherFromConfig(
      { deliveries: services.deliveries, webhooks: services.webhooks, clock, logger, observer: telemetry.deliveries },
      config,
      options.egress,
    );
    services.outbox.onEnqueued = (chatbotId) => dispatcher.kick(chatbotId);
    dispatcher.start();
    stack.push(() => dispatcher.stop());
    services.relay.start();
    stack.push(() => services.relay.stop());
    // Every gateway serves the recorded embedding space; one started with another EMBEDDINGS
    // re-embeds into its own in the background (below) and switches them all when that is complete.
    const { spaces } = services;
    const wanted = { space: createEmbedder(config).space, embeddings: config.EMBEDDINGS };
    const served = await settleEmbeddingSpace(spaces, config, wanted);
    const onBadSource = async (_chatbotId: string, sourceId: string, reason: string) => {
      await services.sources.setStatus(sourceId, 'failed', { error: reason }).catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
      });
    };
    const sayIndex = (progress: LoadProgress) =>
      services.gateways
        .recordSearchIndex(gatewayId, progress, GATEWAY_PRESENCE_TTL_MS)
        .catch((error: unknown) => logger.warn({ err: error }, 'search index progress not recorded'));
    const open = (setting: SpaceSetting, onProgress?: (progress: LoadProgress) => void) =>
      openRetrieval(
        handle.redis,
        services.keys,
        { ...config, EMBEDDINGS: setting.embeddings },
        services.signals,
        logger,
        {
          ...options.searchIndexLoading,
          onProgress,
        },
      );
    // The served space loads in the background: the gateway listens at once, and a search for a
    // chatbot not loaded yet loads that chatbot first (RetrievalIndex.search).
    const first = await open(served, (progress) => void sayIndex(progress));
    const loading = first.index.load(onBadSource).catch((error: unknown) => {
      logger.error({ err: error }, 'the in-process search index did not load; chatbots load when searched');
    });
    stack.push(async () => {
      first.index.stopLoading();
      await loading;
    });
    // A space switched to is loaded before it is served, while the old one answers.
    const openLoaded = async (setting: SpaceSetting) => {
      const opened = await open(setting);
      await opened.index.load(onBadSource);
      return opened;
    };
    const retrieval = new ServedRetrieval(
      { open: openLoaded, serving: (space) => spaces.serving(gatewayId, space), logger },
      first,
    );
    await spaces.serving(gatewayId, retrieval.space);
    // Unanswered questions are grouped in the space this gateway serves, as retrieval embeds them
    // (with the embeddings retrieval made of them).
    services.unansweredRecorder.embedder = () => Promise.resolve(retrieval.queries);
    stack.push(() => spaces.stopServing(gatewayId));
    const ingestion = ingestionWorkerFor(
      {
        queue: services.ingestion,
        sources: services.sources,
        retrieval,
        clock,
        logger,
        chatbots: services.chatbots,
        connectors: new ConnectorReader({
          credentials: services.credentials,
          http: services.connectorHttp,
          limits: connectorLimits(config),
          logger,
        }),
        observer: telemetry.ingestion,
      },
      config,
      options.egress,
    );
    services.intake.onQueued = () => ingestion.kick();
    ingestion.start();
    stack.push(() => ingestion.stop());
    const retentionWorker = new RetentionWorker(
      { schedule: services.retention, store: services.erasure, chatbots: services.chatbots, clock, logger },
      {
        pollMs: config.RETENTION_POLL_MS,
        leaseMs: config.RETENTION_LEASE_MS,
        intervalMs: config.RETENTION_INTERVAL_MS,
        batch: config.RETENTION_BATCH,
      },
    );
    retentionWorker.start();
    stack.push(() => retentionWorker.stop());
    // Says this gateway is running, for the CLI's `source add --wait` (only gateways ingest).
    const beat = async () => {
      await services.gateways.beat(gatewayId, GATEWAY_PRESENCE_TTL_MS);
      await sayIndex(retrieval.index.progress);
    };
    await beat();
    const beating = clock.setInterval(() => {
      beat().catch((error: unknown) => logger.warn({ err: error }, 'gateway presence not recorded'));
    }, GATEWAY_PRESENCE_TTL_MS / 3);
    stack.push(async () => {
      clock.clearTimer(beating);
      await services.gateways.leave(gatewayId);
    });
    const providers = options.providers ?? createLlmProviders(config);
    const router = conversationRouter(services, retrieval, providers, config, options, clock, logger, telemetry.turns);
    router.start();
    stack.push(() => router.stop(options.shutdownGraceMs ?? 10_000));
    const server = createHttpServer(logger);
    if (telemetry.metrics) observeHttpRequests(server, telemetry.metrics);
    const suggestions = replySuggester(services, handle, retrieval, providers, config, options, clock, logger);
    const { sockets, widget, agents } = socketServer(services, router, suggestions, handle, config, clock, logger);
    const { telegram, whatsapp } = messagingChannels(services, router, config, options, clock, logger);
    const streams = new ReplyStreamGate(clock);
    const targets = { router, channels: [widget, telegram, whatsapp], agents, streams, retrieval, logger };
    await services.signals.subscribe((signal) => routeSignal(signal, { ...targets, busId: services.signals.id }));
    stack.push(() => services.signals.stop());
    // A switch announced before this gateway listened is not missed.
    const active = await spaces.active();
    if (active && active.space !== retrieval.space) await retrieval.serve(active);
    const migration = await spaceMigration(services, handle, retrieval, wanted, config, options, clock, logger);
    if (migration) stack.push(() => migration.stop());
    await telegram.start();
    stack.push(() => telegram.stop());
    await whatsapp.start();
    stack.push(() => whatsapp.stop());
    registerHealthRoutes(server, () => redisAnswers(handle));
    registerPublicApi(server, { ...services, router });
    const bundles = new WebBundles();
    registerWidgetRoutes(server, { ...services, bundles });
    registerAgentRoutes(server, { ...services, bundles });
    registerTelegramRoutes(server, telegram);
    registerWhatsAppCloudRoutes(server, whatsapp.cloud);
    registerDashboard(server, {
      services,
      retrieval,
      bundles,
      clock,
      publicUrl: config.PUBLIC_URL,
      trustedProxies: config.TRUSTED_PROXIES,
      providerCheck: new ProviderCheck({
        providers,
        callable: callableProviders(config),
        redis: handle.redis,
        keys: services.keys,
        clock,
      }),
    });
    sockets.attach(server.server);
    const metricsPort = await serveMetrics(telemetry, {
      services,
      router,
      sockets,
      server,
      retrieval,
      config,
      clock,
      logger,
    });
    if (metricsPort.stop) stack.push(metricsPort.stop);
    const port = await listen(server, config.PORT, config.HOST);
    stack.push(() => closeGracefully(server, options.shutdownGraceMs ?? 10_000));
    // Sockets close first: an open websocket would hold the HTTP server's close forever.
    stack.push(() => sockets.close());
    logger.info({ port, host: config.HOST }, 'gateway listening');
    // The CLI derives the links it prints (an invite, an OAuth sign-in) from the gateways' address,
    // not its own configuration.
    if (config.PUBLIC_URL) await services.gateways.publishUrl(config.PUBLIC_URL);
    await services.gateways.publishSetup(gatewaySetup(config, port));
    return {
      port,
      http: server,
      services,
      router,
      dispatcher,
      retrieval,
      migration,
      ingestion,
      retention: retentionWorker,
      sockets,
      whatsapp,
      telemetry,
      metricsPort: metricsPort.port,
      stop: async () => {
        await unwind();
        logger.info('gateway stopped');
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** The conversation actors' router, with everything a turn uses. */
function conversationRouter(
  services: Services,
  retrieval: ServedRetrieval,
  providers: LlmProviders,
  config: Config,
  options: AppOptions,
  clock: Clock,
  logger: Logger,
  observer: TurnObserver | undefined,
): ConversationRouter {
  const retriever = options.retriever ?? retrieval;
  const rewriteTimeoutMs = config.LLM_TIMEOUT_MS;
  const pipeline = new TurnPipeline({
    conversations: services.conversations,
    quota: services.quota,
    retrieval: new TurnRetrieval({ retriever, providers, clock, logger, rewriteTimeoutMs }),
    providers,
    relay: services.relay,
    escalate: (chatbotId, sessionId) => services.control.escalate(chatbotId, sessionId),
    feed: {
      publish: (...stored) => services.signals.publish(messageSignal(...stored)),
      forScript: (...stored) => services.signals.forScript(messageSignal(...stored)),
    },
    stream: (chatbotId, sessionId) => new ReplyStream({ signals: services.signals, logger }, chatbotId, sessionId),
    relevanceFloor: () => relevanceFloor(retrieval.space),
    unanswered: services.unansweredRecorder,
    clock,
    logger,
    fenceNonce: options.fenceNonce,
    limits: {
      rateLimit: config.CONVERSATION_RATE_LIMIT,
      rateWindowMs: config.CONVERSATION_RATE_WINDOW_MS,
      leaseMs: config.CONVERSATION_LEASE_MS,
    },
  });
  return new ConversationRouter(pipeline, { idleMs: config.CONVERSATION_IDLE_MS, clock, observer });
}

/**
 * The re-embedding this gateway runs when its `EMBEDDINGS` makes another space than the one served, or
 * to end one whose gateway died between the switch and dropping the old chunks. A re-embedding no
 * gateway works on any more is ended first.
 */
async function spaceMigration(
  services: Services,
  handle: RedisHandle,
  retrieval: ServedRetrieval,
  wanted: SpaceSetting,
  config: Config,
  options: AppOptions,
  clock: Clock,
  logger: Logger,
): Promise<SpaceMigration | undefined> {
  const deps = {
    redis: handle.redis,
    keys: services.keys,
    store: services.spaces,
    gateways: services.gateways,
    ingestion: services.ingestion,
    embedderFor: (embeddings: string) => createEmbedder({ ...config, EMBEDDINGS: embeddings }),
    prepare: async (space: string, dimensions: number) => {
      if (retrieval.engine.name !== 'redis') return;
      const { keys } = services;
      await createSearchIndex(handle.redis, keys.searchIndex(space), keys.chunkPrefix(space), dimensions);
    },
    switched: async (setting: SpaceSetting) => {
      await retrieval.serve(setting);
      await services.signals.publish({ kind: 'embedding-space', ...setting });
    },
    clock,
    logger,
  };
  await endAbandonedMigration(deps, wanted.space);
  const pending = await services.spaces.migration();
  if (wanted.space === retrieval.space && !(pending?.phase === 'switched' && pending.to === wanted.space)) return;
  const migration = new SpaceMigration(deps, {
    ...SPACE_MIGRATION_OPTIONS,
    leaseMs: config.REEMBED_LEASE_MS,
    ...options.spaceMigration,
  });
  migration.start(wanted);
  return migration;
}

/** The agents' reply suggestions: the turns' retrieval and providers, behind a per-agent gate in Redis. */
function replySuggester(
  services: Services,
  handle: RedisHandle,
  retrieval: ServedRetrieval,
  providers: LlmProviders,
  config: Config,
  options: AppOptions,
  clock: Clock,
  logger: Logger,
): ReplySuggester {
  const retriever = options.retriever ?? retrieval;
  const timeoutMs = config.LLM_TIMEOUT_MS;
  return new ReplySuggester({
    conversations: services.conversations,
    retrieval: new TurnRetrieval({ retriever, providers, clock, logger, rewriteTimeoutMs: timeoutMs }),
    providers,
    // The hold outlives a suggestion's rewrite and answer calls; it lapses only if its gateway died.
    gate: new SuggestionGate(handle.redis, services.keys, {
      limit: config.AGENT_SUGGESTIONS_PER_MINUTE,
      windowMs: 60_000,
      holdMs: 2 * timeoutMs + 10_000,
    }),
    clock,
    logger,
    timeoutMs,
    fenceNonce: options.fenceNonce,
  });
}

/** The websocket server with its two routes: the visitors' widget socket and the agents' socket. */
function socketServer(
  services: Services,
  router: ConversationRouter,
  suggestions: ReplySuggester,
  handle: RedisHandle,
  config: Config,
  clock: Clock,
  logger: Logger,
): { sockets: SocketServer; widget: WidgetAdapter; agents: AgentHub } {
  const opens = new SocketOpenGate(handle.redis, services.keys, {
    perAddress: config.SOCKET_OPENS_PER_ADDRESS,
    windowMs: config.SOCKET_OPENS_WINDOW_MS,
  });
  const sockets = new SocketServer(
    {
      maxFrameBytes: 16 * 1024,
      heartbeatMs: config.SOCKET_HEARTBEAT_MS,
      sendBufferBytes: config.SOCKET_SEND_BUFFER_BYTES,
      frameRate: config.SOCKET_FRAME_RATE,
      frameBurst: config.SOCKET_FRAME_BURST,
      queueFrames: config.SOCKET_INBOUND_QUEUE,
    },
    { logger, clock, opens, trustedProxies: config.TRUSTED_PROXIES },
  );
  const outbound = new WidgetOutbound(sockets);
  const widgetSessions = new WidgetSessionStore(handle.redis, services.keys, {
    ttlSeconds: WIDGET_SESSION_TTL_SECONDS,
    perAddress: config.WIDGET_NEW_SESSIONS_PER_ADDRESS,
    windowMs: config.WIDGET_NEW_SESSIONS_WINDOW_MS,
  });
  const widget = new WidgetAdapter({ ...services, widgetSessions, router, outbound, logger, clock });
  sockets.route(WIDGET_SOCKET_PATH, widget);
  const agents = new AgentHub({ ...services, sockets, logger });
  sockets.route(
    AGENT_SOCKET_PATH,
    new AgentSocket({
      ...services,
      suggestions,
      hub: agents,
      sockets,
      clock,
      logger,
      presenceTtlMs: Math.max(3 * config.SOCKET_HEARTBEAT_MS, 30_000),
      authTimeoutMs: 10_000,
    }),
  );
  return { sockets, widget, agents };
}

/** The Telegram and WhatsApp channels (started once signals are subscribed). */
function messagingChannels(
  services: Services,
  router: ConversationRouter,
  config: Config,
  options: AppOptions,
  clock: Clock,
  logger: Logger,
): { telegram: TelegramChannel; whatsapp: WhatsAppChannel } {
  const telegram = new TelegramChannel({
    store: services.telegram,
    chatbots: services.chatbots,
    router,
    logger,
    clock,
    apiRoot: config.TELEGRAM_API_ROOT,
    publicUrl: config.PUBLIC_URL,
    pollerLeaseMs: config.TELEGRAM_POLLER_LEASE_MS,
  });
  const cloud = new WhatsAppCloudAdapter({
    store: services.whatsappCloud,
    delivery: services.whatsappCloudDelivery,
    chatbots: services.chatbots,
    router,
    logger,
    clock,
  });
  const whatsapp = new WhatsAppChannel({
    store: services.whatsapp,
    chatbots: services.chatbots,
    router,
    control: services.control,
    logger,
    clock,
    cloud,
    socketFactory: options.whatsappSockets ?? baileysSocketFactory(),
    leaseMs: config.WHATSAPP_SOCKET_LEASE_MS,
    reconnectFirstMs: options.whatsappReconnectMs,
  });
  return { telegram, whatsapp };
}

/**
 * Serves the metrics, when on: the scrape-time gauges, `/metrics` on the public server when
 * METRICS_TOKEN is set (behind it), and the separate port when METRICS_PORT is set (behind the token
 * too, when there is one). Resolves with the separate port and how to close it.
 */
async function serveMetrics(
  telemetry: Telemetry,
  parts: {
    services: Services;
    router: ConversationRouter;
    sockets: SocketServer;
    server: Server;
    retrieval: ServedRetrieval;
    config: Config;
    clock: Clock;
    logger: Logger;
  },
): Promise<{ port?: number; stop?: () => Promise<void> }> {
  const { metrics } = telemetry;
  if (!metrics) return {};
  const { services, router, sockets, server, retrieval, config, clock, logger } = parts;
  registerGatewayGauges(metrics, {
    deliveries: services.deliveries,
    ingestion: services.ingestion,
    actors: () => router.size,
    sockets: () => ({ widget: sockets.openAt(WIDGET_SOCKET_PATH), agent: sockets.openAt(AGENT_SOCKET_PATH) }),
    searchIndex: () => retrieval.index.progress,
    clock,
    logger,
  });
  const access = new MetricsAccess(config.METRICS_TOKEN);
  if (config.METRICS_TOKEN !== undefined) registerMetricsRoute(server, metrics, access);
  if (config.METRICS_PORT === undefined) return {};
  const separate = new MetricsServer(metrics, access, logger);
  const port = await separate.listen(config.METRICS_PORT, config.METRICS_HOST);
  logger.info({ port, host: config.METRICS_HOST }, 'metrics listening');
  return { port, stop: () => separate.close() };
}

/** Whether Redis answers on both of the process's connections to it (see plainConnection). */
async function redisAnswers(handle: RedisHandle): Promise<boolean> {
  const connections = new Set([handle.redis, plainConnection(handle.redis)]);
  if ([...connections].some((connection) => !connection.isReady)) return false;
  try {
    const replies = await Promise.all([...connections].map((connection) => connection.ping()));
    return replies.every((reply) => reply === 'PONG');
  } catch {
    return false;
  }
}

/** The signal that tells agents of a stored message; an AI reply that was streamed names its stream. */
function messageSignal(chatbotId: string, sessionId: string, message: StoredMessage, streamId?: string): Signal {
  return {
    kind: 'message',
    chatbot_id: chatbotId,
    session_id: sessionId,
    message,
    ...(streamId ? { stream_id: streamId } : {}),
  };
}
