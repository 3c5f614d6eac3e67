import { ConversationRouter } from './actors/conversation-router.ts';
import { ingestionWorkerFor, type IngestionWorker } from './actors/ingestion-worker.ts';
import { dispatcherFromConfig, type WebhookDispatcher } from './actors/webhook-dispatcher.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { EventSink } from './events/webhook-event.ts';
import { closeGracefully, createHttpServer, listen } from './http/http-server.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerPublicApi } from './http/public-api.ts';
import { SocketServer } from './http/socket-server.ts';
import { WebBundles } from './http/web-bundle.ts';
import { registerWidgetRoutes } from './http/widget-routes.ts';
import { WidgetAdapter } from './channels/widget/adapter.ts';
import { WIDGET_SESSION_TTL_SECONDS, WIDGET_SOCKET_PATH } from './channels/widget/config.ts';
import { WidgetOutbound } from './channels/widget/outbound.ts';
import { WidgetSessionStore } from './store/widget-session-store.ts';
import { AgentHub } from './agents/agent-hub.ts';
import { AgentSocket } from './agents/agent-socket.ts';
import { registerAgentRoutes } from './http/agent-routes.ts';
import { registerDashboard } from './http/dashboard-routes.ts';
import { registerTelegramRoutes } from './http/telegram-routes.ts';
import { TelegramChannel } from './channels/telegram/adapter.ts';
import { WhatsAppChannel } from './channels/whatsapp/adapter.ts';
import { baileysSocketFactory, type WhatsAppSocketFactory } from './channels/whatsapp/socket.ts';
import { createLlmProviders, type LlmProviders } from './llm/llm-providers.ts';
import type { Logger } from './logger.ts';
import type { Retriever } from './rag/retriever.ts';
import { openRetrieval, type Retrieval } from './rag/retrieval.ts';
import { createServices, type Services } from './services.ts';
import { openRedis, type RedisHandle } from './store/redis-client.ts';

/** A running gateway. */
export interface App {
  readonly port: number;
  readonly services: Services;
  readonly router: ConversationRouter;
  readonly dispatcher: WebhookDispatcher;
  readonly retrieval: Retrieval;
  readonly ingestion: IngestionWorker;
  readonly sockets: SocketServer;
  readonly whatsapp: WhatsAppChannel;
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
}

/**
 * The composition root: wires Redis, the service layer, the conversation actors and the HTTP
 * server, starts them in dependency order and stops them in reverse.
 */
export async function startApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const clock = options.clock ?? systemClock;
  const handle: RedisHandle = await openRedis({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR }, logger);
  const stack: Array<() => Promise<void> | void> = [() => handle.close()];
  const unwind = async () => {
    for (const stop of stack.reverse()) await stop();
  };
  try {
    const services = createServices(handle.redis, config, clock, logger, options.events);
    const dispatcher = dispatcherFromConfig(
      { deliveries: services.deliveries, webhooks: services.webhooks, clock, logger },
      config,
    );
    services.outbox.onEnqueued = () => dispatcher.kick();
    dispatcher.start();
    stack.push(() => dispatcher.stop());
    services.relay.start();
    stack.push(() => services.relay.stop());
    const retrieval = await openRetrieval(handle.redis, services.keys, config, services.signals, logger);
    await retrieval.index.load();
    const ingestion = ingestionWorkerFor(
      {
        queue: services.ingestion,
        sources: services.sources,
        index: retrieval.index,
        embedder: retrieval.embedder,
        clock,
        logger,
      },
      config,
      2,
    );
    services.intake.onQueued = () => ingestion.kick();
    ingestion.start();
    stack.push(() => ingestion.stop());
    const router = new ConversationRouter(
      {
        conversations: services.conversations,
        quota: services.quota,
        retriever: options.retriever ?? retrieval.retriever,
        providers: options.providers ?? createLlmProviders(config),
        relay: services.relay,
        escalate: (chatbotId, sessionId) => services.control.escalate(chatbotId, sessionId),
        feed: (chatbotId, sessionId, message) =>
          services.signals.publish({ kind: 'message', chatbot_id: chatbotId, session_id: sessionId, message }),
        clock,
        logger,
        limits: {
          rateLimit: config.CONVERSATION_RATE_LIMIT,
          rateWindowMs: config.CONVERSATION_RATE_WINDOW_MS,
          leaseMs: config.CONVERSATION_LEASE_MS,
        },
      },
      { idleMs: config.CONVERSATION_IDLE_MS, clock },
    );
    router.start();
    stack.push(() => router.stop());
    const server = createHttpServer(logger);
    const sockets = new SocketServer(
      {
        maxFrameBytes: 16 * 1024,
        heartbeatMs: config.SOCKET_HEARTBEAT_MS,
        sendBufferBytes: config.SOCKET_SEND_BUFFER_BYTES,
      },
      logger,
    );
    const widgetOutbound = new WidgetOutbound(sockets, services.signals);
    sockets.route(
      WIDGET_SOCKET_PATH,
      new WidgetAdapter({
        ...services,
        widgetSessions: new WidgetSessionStore(handle.redis, services.keys, WIDGET_SESSION_TTL_SECONDS),
        router,
        outbound: widgetOutbound,
        logger,
      }),
    );
    const agentHub = new AgentHub({ sockets, chatbots: services.chatbots, logger });
    sockets.route(
      '/agents/v1/socket',
      new AgentSocket({
        ...services,
        hub: agentHub,
        sockets,
        logger,
        presenceTtlMs: Math.max(3 * config.SOCKET_HEARTBEAT_MS, 30_000),
        authTimeoutMs: 10_000,
      }),
    );
    const telegram = new TelegramChannel({
      store: services.telegram,
      chatbots: services.chatbots,
      router,
      logger,
      apiRoot: config.TELEGRAM_API_ROOT,
      publicUrl: config.PUBLIC_URL,
      pollerLeaseMs: config.TELEGRAM_POLLER_LEASE_MS,
    });
    const whatsapp = new WhatsAppChannel({
      store: services.whatsapp,
      chatbots: services.chatbots,
      router,
      control: services.control,
      logger,
      socketFactory: options.whatsappSockets ?? baileysSocketFactory(),
      leaseMs: config.WHATSAPP_SOCKET_LEASE_MS,
      reconnectFirstMs: options.whatsappReconnectMs,
    });
    await services.signals.subscribe((signal) => {
      if (signal.kind === 'channel') {
        const channel = signal.channel === 'whatsapp' ? whatsapp : telegram;
        void channel.reload(signal.chatbot_id).catch((error: unknown) => {
          logger.error(
            { err: error, chatbot_id: signal.chatbot_id },
            `could not restart the ${signal.channel} channel`,
          );
        });
      } else if (signal.kind === 'conversation') router.signal(signal.chatbot_id, signal.session_id);
      else if (signal.kind === 'visitor') {
        widgetOutbound.deliver(signal.chatbot_id, signal.session_id, signal.push);
        whatsapp.deliver(signal.chatbot_id, signal.session_id, signal.push);
      } else if (signal.kind === 'escalated') {
        widgetOutbound.deliver(signal.chatbot_id, signal.session_id, { type: 'escalated' });
        agentHub.onSignal(signal);
      } else if (signal.kind === 'message') agentHub.onSignal(signal);
      // This process's own index was updated before it announced the change: reloading it again
      // would be work done twice, and could race the write it announces.
      else if (signal.origin !== services.signals.id)
        void retrieval.index.reloadSource(signal.chatbot_id, signal.source_id).catch((error: unknown) => {
          logger.error({ err: error }, 'could not reload a source into the search index');
        });
    });
    stack.push(() => services.signals.stop());
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
    registerDashboard(server, {
      services,
      retrieval,
      bundles,
      clock,
      publicUrl: config.PUBLIC_URL,
      trustedProxies: config.TRUSTED_PROXIES,
    });
    sockets.attach(server.server);
    const port = await listen(server, config.PORT, config.HOST);
    stack.push(() => closeGracefully(server, options.shutdownGraceMs ?? 10_000));
    // Sockets close first: an open websocket would hold the HTTP server's close forever.
    stack.push(() => sockets.close());
    logger.info({ port, host: config.HOST }, 'gateway listening');
    return {
      port,
      services,
      router,
      dispatcher,
      retrieval,
      ingestion,
      sockets,
      whatsapp,
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

async function redisAnswers(handle: RedisHandle): Promise<boolean> {
  if (!handle.redis.isReady) return false;
  try {
    return (await handle.redis.ping()) === 'PONG';
  } catch {
    return false;
  }
}
