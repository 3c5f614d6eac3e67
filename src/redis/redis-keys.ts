import { createHash } from 'node:crypto';

/** Hash tags the webhook outbox is spread over (changing it would strand the deliveries of a tag). */
export const DELIVERY_SHARDS = 16;
/** The outbox's one tag before it was sharded. */
export const LEGACY_DELIVERY_SHARD = 'wh';

/**
 * Every Redis key the gateway uses, under one configurable prefix. Keys of one account share the hash
 * tag `{u:<user_id>}` and keys of one chatbot share `{b:<chatbot_id>}`, so each multi-key script touches
 * a single Redis Cluster slot. Global lookups (email, key hash, source owner) are single-key.
 */
export class RedisKeys {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  user(userId: string): string {
    return `${this.prefix}{u:${userId}}:user`;
  }
  userByEmail(email: string): string {
    return `${this.prefix}email:${email}`;
  }
  /** Set once any owner account exists: first-run setup is over. */
  accountsExist(): string {
    return `${this.prefix}accounts-exist`;
  }
  /** Held while an owner may not test a provider again (each test is a billed call). */
  providerTest(userId: string, provider: string): string {
    return `${this.prefix}{u:${userId}}:provider-test:${provider}`;
  }
  /** A first-run setup token a gateway printed, by the SHA-256 of its secret. */
  setupToken(hash: string): string {
    return `${this.prefix}setup-token:${hash}`;
  }
  apiKeys(userId: string): string {
    return `${this.prefix}{u:${userId}}:keys`;
  }
  apiKey(userId: string, keyId: string): string {
    return `${this.prefix}{u:${userId}}:key:${keyId}`;
  }
  apiKeyByHash(sha256Hex: string): string {
    return `${this.prefix}keyhash:${sha256Hex}`;
  }
  rateWindow(userId: string, keyId: string): string {
    return `${this.prefix}{u:${userId}}:rl:${keyId}`;
  }
  chatbotsOf(userId: string): string {
    return `${this.prefix}{u:${userId}}:bots`;
  }
  slugsOf(userId: string): string {
    return `${this.prefix}{u:${userId}}:slugs`;
  }
  chatbot(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:bot`;
  }
  sourcesOf(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:sources`;
  }
  source(chatbotId: string, sourceId: string): string {
    return `${this.prefix}{b:${chatbotId}}:source:${sourceId}`;
  }
  sourceContent(chatbotId: string, sourceId: string): string {
    return `${this.prefix}{b:${chatbotId}}:source:${sourceId}:content`;
  }
  conversation(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}`;
  }
  conversationLease(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:lease`;
  }
  conversationMessages(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:msgs`;
  }
  /** Why turns failed, by the visitor message's timestamp (the owner reads it in the transcript). */
  conversationFailures(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:failures`;
  }
  /** Visitors' ratings of AI replies, by the reply's timestamp. */
  conversationFeedback(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:feedback`;
  }
  /**
   * How far replies sent through a messaging platform got (sent, delivered, read, failed), by the
   * reply's timestamp; the transcript shows it on the reply.
   */
  conversationDelivery(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:delivery`;
  }
  /** How many replies of the chatbot were rated up and down, by the replies' month (`YYYY-MM:up`). */
  ratings(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:ratings`;
  }
  /**
   * The visitor messages of a conversation recorded in the unanswered inbox, by the message's time
   * (microseconds): the group each went to and its reasons, so one question counts once.
   */
  conversationUnanswered(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:unanswered`;
  }
  /** The unanswered inbox's groups of questions, open and resolved: group id → its record (JSON). */
  unansweredGroups(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:groups`;
  }
  /** Open groups by when a question of theirs was last asked. */
  unansweredOpen(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:open`;
  }
  /** Resolved groups by when they were resolved. */
  unansweredResolved(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:resolved`;
  }
  /** A question's normalized text → the open group it belongs to. */
  unansweredTexts(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:texts`;
  }
  /** Open groups' representative embeddings: group id → `<space> <base64 float32>`. */
  unansweredVectors(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:vectors`;
  }
  /** Counts changes to the open groups' embeddings (a writer that matched against older ones retries). */
  unansweredVersion(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:unanswered:version`;
  }
  conversationDiscarded(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:discarded`;
  }
  conversationRateWindow(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv:${sessionId}:rl`;
  }
  conversationsOf(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:convs`;
  }
  /** Conversation id → session id, for lookups by the id that webhooks carry. */
  conversationIds(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:conv-ids`;
  }
  /** Widget sessions handed out and not yet used (so a reconnect can resume them). */
  widgetSession(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:widget-session:${sessionId}`;
  }
  /** The widget sessions one client address started on a chatbot lately (a sliding window). */
  newWidgetSessions(chatbotId: string, address: string): string {
    return `${this.prefix}{b:${chatbotId}}:new-sessions:${address}`;
  }
  /** The widget session the dashboard's preview of a chatbot talks in now. */
  previewSession(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:preview-session`;
  }
  /** Every widget session the dashboard's preview of a chatbot has talked in (to mark them in its lists). */
  previewSessions(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:preview-sessions`;
  }
  leadsOf(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:leads`;
  }
  lead(chatbotId: string, leadId: string): string {
    return `${this.prefix}{b:${chatbotId}}:lead:${leadId}`;
  }
  /** The lead a conversation left (a session has one lead; a later form updates it). */
  leadOfSession(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:lead-of-session:${sessionId}`;
  }
  /** A chatbot's Telegram connection (token, mode, secret token, the bot's identity). */
  telegram(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:telegram`;
  }
  /** Chatbots with a Telegram connection. */
  telegramBots(): string {
    return `${this.prefix}telegram-bots`;
  }
  /** An update already taken in (Telegram re-sends updates it thinks were not received). */
  telegramUpdate(chatbotId: string, updateId: number): string {
    return `${this.prefix}{b:${chatbotId}}:telegram:update:${updateId}`;
  }
  /** Which gateway process long-polls a chatbot's Telegram bot (one at a time). */
  telegramPoller(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:telegram:poller`;
  }
  /** A chatbot's WhatsApp connection: link state, QR or pairing code while linking, the linked account. */
  whatsapp(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp`;
  }
  /** Chatbots with a WhatsApp connection. */
  whatsappBots(): string {
    return `${this.prefix}whatsapp-bots`;
  }
  /** The linked device's credentials (Baileys' creds, BufferJSON). */
  whatsappCreds(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:creds`;
  }
  /** The linked device's signal keys, one hash field per `<type>-<id>` (BufferJSON). */
  whatsappKeys(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:keys`;
  }
  /** Which gateway process runs the chatbot's WhatsApp socket (one at a time). */
  whatsappSocket(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:socket`;
  }
  /** A message already taken in (WhatsApp may deliver a message again). */
  whatsappMessage(chatbotId: string, messageId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:msg:${messageId}`;
  }
  /**
   * A chatbot's WhatsApp Business Cloud API connection: phone number id, business account id, the
   * sealed access token and app secret, the verify token, the notice for messages that are not text.
   */
  whatsappCloud(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:cloud`;
  }
  /** A Cloud API message id already taken in (Meta retries a webhook it thinks was not received). */
  whatsappCloudInbound(chatbotId: string, messageId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:cloud:in:${messageId}`;
  }
  /**
   * A Cloud API chat's customer-service window: when the visitor last wrote (ms) and that message's
   * id (read receipts and the typing indicator name it).
   */
  whatsappCloudWindow(chatbotId: string, sessionId: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:cloud:window:${sessionId}`;
  }
  /** The stored reply a message sent through the Cloud API belongs to (its status callbacks name it). */
  whatsappCloudSent(chatbotId: string, wamid: string): string {
    return `${this.prefix}{b:${chatbotId}}:whatsapp:cloud:sent:${wamid}`;
  }
  agentsOf(userId: string): string {
    return `${this.prefix}{u:${userId}}:agents`;
  }
  agent(userId: string, agentId: string): string {
    return `${this.prefix}{u:${userId}}:agent:${agentId}`;
  }
  agentOwner(agentId: string): string {
    return `${this.prefix}agent-owner:${agentId}`;
  }
  agentByHash(sha256Hex: string): string {
    return `${this.prefix}agent-token:${sha256Hex}`;
  }
  /** Agent connections online for an owner, scored by when each stops counting (ms). */
  agentsOnline(userId: string): string {
    return `${this.prefix}{u:${userId}}:agents-online`;
  }
  /** An owner's canned replies: id → the reply as JSON. */
  cannedReplies(userId: string): string {
    return `${this.prefix}{u:${userId}}:canned`;
  }
  /** An owner's canned reply shortcuts: shortcut → reply id (a shortcut names one reply). */
  cannedShortcuts(userId: string): string {
    return `${this.prefix}{u:${userId}}:canned-shortcuts`;
  }
  /** Held while a reply suggestion for one agent is being written (one at a time per agent). */
  suggestionBusy(userId: string, agentId: string): string {
    return `${this.prefix}{u:${userId}}:suggest-busy:${agentId}`;
  }
  /** One agent's recent reply suggestions (a sliding window). */
  suggestionWindow(userId: string, agentId: string): string {
    return `${this.prefix}{u:${userId}}:suggest-rl:${agentId}`;
  }
  webhooksOf(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:webhooks`;
  }
  webhook(chatbotId: string, webhookId: string): string {
    return `${this.prefix}{b:${chatbotId}}:webhook:${webhookId}`;
  }
  webhookOwner(webhookId: string): string {
    return `${this.prefix}webhook-bot:${webhookId}`;
  }
  /**
   * The delivery shard of a chatbot's webhook deliveries: one of DELIVERY_SHARDS hash tags, so that
   * on a Redis Cluster the outbox spreads over the slots while one script still claims, logs and
   * reschedules the deliveries of one shard, and a conversation's deliveries stay in one line.
   */
  deliveryShard(chatbotId: string): string {
    return `wh:${createHash('sha1').update(chatbotId).digest()[0]! % DELIVERY_SHARDS}`;
  }
  /**
   * Every delivery shard, the one tag every delivery shared before the outbox was sharded first: its
   * deliveries are still claimed, looked up and listed until they expire (nothing is written there).
   */
  deliveryShards(): string[] {
    return [LEGACY_DELIVERY_SHARD, ...Array.from({ length: DELIVERY_SHARDS }, (_, i) => `wh:${i}`)];
  }
  deliveryPrefix(shard: string): string {
    return `${this.prefix}{${shard}}:`;
  }
  deliveriesDue(shard: string): string {
    return `${this.prefix}{${shard}}:due`;
  }
  delivery(shard: string, deliveryId: string): string {
    return `${this.prefix}{${shard}}:delivery:${deliveryId}`;
  }
  deliveryAttempts(shard: string, deliveryId: string): string {
    return `${this.prefix}{${shard}}:delivery:${deliveryId}:attempts`;
  }
  deliveryLog(shard: string, webhookId: string): string {
    return `${this.prefix}{${shard}}:log:${webhookId}`;
  }
  /** Chunk hashes of one embedding space share this prefix (the search index's PREFIX). */
  chunkPrefix(space: string): string {
    return `${this.prefix}chunk:${space}:`;
  }
  chunk(space: string, chatbotId: string, chunkId: string): string {
    return `${this.prefix}chunk:${space}:{b:${chatbotId}}:${chunkId}`;
  }
  sourceChunks(chatbotId: string, sourceId: string): string {
    return `${this.prefix}{b:${chatbotId}}:source:${sourceId}:chunks`;
  }
  /** Before the space and its EMBEDDINGS were kept together: the space alone (read once, then moved). */
  legacyEmbeddingSpace(): string {
    return `${this.prefix}embedding-space`;
  }
  /** The embedding space the gateways serve: `space` and the `embeddings` setting that makes it. */
  embeddingSpace(): string {
    return `${this.prefix}{ingest}:space`;
  }
  /** The re-embedding into another space: its target, phase and progress (kept when it ends). */
  spaceMigration(): string {
    return `${this.prefix}{ingest}:migration`;
  }
  /** Which gateway runs the re-embedding (a lease). */
  spaceMigrationLease(): string {
    return `${this.prefix}{ingest}:migration-lease`;
  }
  /** Set while sources must not be ingested (a re-embedding is copying), with the lease's expiry. */
  ingestPaused(): string {
    return `${this.prefix}{ingest}:paused`;
  }
  /** The embedding space each gateway serves, by gateway id. */
  servedSpaces(): string {
    return `${this.prefix}{ingest}:served`;
  }
  /** The search index of one embedding space. */
  searchIndex(space: string): string {
    return `${this.prefix}idx:${space}`;
  }
  /** Sources waiting for ingestion, and the ones being ingested (with their lease). */
  ingestQueue(): string {
    return `${this.prefix}{ingest}:queue`;
  }
  ingestLeases(): string {
    return `${this.prefix}{ingest}:leases`;
  }
  /** The token of each lease: only the claim that holds it renews or ends it. */
  ingestLeaseTokens(): string {
    return `${this.prefix}{ingest}:lease-tokens`;
  }
  /** Sources asked to sync while being ingested: queued again when that run ends. */
  syncAgain(): string {
    return `${this.prefix}{ingest}:sync-again`;
  }
  /**
   * Chatbots whose retention sweep is scheduled, by when the next one is due (µs); while a gateway
   * sweeps one, by when its claim lapses.
   */
  retentionDue(): string {
    return `${this.prefix}{retention}:due`;
  }
  /** The token of each chatbot's claimed sweep: only that claim renews or ends it. */
  retentionClaims(): string {
    return `${this.prefix}{retention}:claims`;
  }
  /** Sources by when their next scheduled re-sync is due (µs). */
  syncDue(): string {
    return `${this.prefix}{ingest}:sync-due`;
  }
  /**
   * Events of the chatbot whose webhook deliveries may not be written yet, by entry id: written in the
   * same script as what they report (a message, an escalation, a lead), removed once delivered to the
   * outbox, so a process that dies in between loses none.
   */
  pendingEvents(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:pending-events`;
  }
  /** The same entries by when another process should write their deliveries if nobody has. */
  pendingEventsDue(chatbotId: string): string {
    return `${this.prefix}{b:${chatbotId}}:pending-events:due`;
  }
  /** Chatbots that may have pending events, by when one of their events was last recorded. */
  pendingEventBots(): string {
    return `${this.prefix}pending-event-bots`;
  }
  quota(userId: string, month: string): string {
    return `${this.prefix}{u:${userId}}:quota:${month}`;
  }
  signals(): string {
    return `${this.prefix}signals`;
  }
  sourceOwner(sourceId: string): string {
    return `${this.prefix}source-bot:${sourceId}`;
  }
  /** Messages counted on one UTC day (`YYYY-MM-DD`), for the dashboard's chart. */
  quotaDay(userId: string, day: string): string {
    return `${this.prefix}{u:${userId}}:quota-day:${day}`;
  }
  /** An owner's dashboard password (scrypt hash with its parameters). */
  password(userId: string): string {
    return `${this.prefix}{u:${userId}}:password`;
  }
  /** One dashboard session, by the SHA-256 of its secret. */
  dashboardSession(userId: string, secretHash: string): string {
    return `${this.prefix}{u:${userId}}:session:${secretHash}`;
  }
  /** The hashes of an owner's dashboard sessions (so all of them can be ended at once). */
  dashboardSessionsOf(userId: string): string {
    return `${this.prefix}{u:${userId}}:sessions`;
  }
  /** An owner's pending invitation to set a password (one at a time). */
  invite(userId: string): string {
    return `${this.prefix}{u:${userId}}:invite`;
  }
  /**
   * Recent failed sign-ins for one email address from one client address (SHA-256 of the pair), and
   * from one client address whatever the email.
   */
  loginAttemptsByEmailAndAddress(pairHash: string): string {
    return `${this.prefix}{login}:pair:${pairHash}`;
  }
  loginAttemptsByAddress(address: string): string {
    return `${this.prefix}{login}:addr:${address}`;
  }
  /** Sign-ins from one client address that are being checked now (each with its lease's end). */
  loginsInFlight(address: string): string {
    return `${this.prefix}{login}:busy:${address}`;
  }
  /** Recent socket opens (widget and agent) from one client address: no hash tag, spread over the cluster. */
  socketOpens(address: string): string {
    return `${this.prefix}socket-opens:${address}`;
  }
  /** A user's connections to knowledge services (id by creation time), and one connection. */
  connectionsOf(userId: string): string {
    return `${this.prefix}{u:${userId}}:connections`;
  }
  connection(userId: string, connectionId: string): string {
    return `${this.prefix}{u:${userId}}:connection:${connectionId}`;
  }
  connectionOwner(connectionId: string): string {
    return `${this.prefix}connection-user:${connectionId}`;
  }
  /** Held by the one gateway that refreshes a connection's token (the others wait for its result). */
  connectionRefresh(connectionId: string): string {
    return `${this.prefix}connection-refresh:${connectionId}`;
  }
  /** A pending OAuth authorization (its `state`), kept ten minutes. */
  oauthState(state: string): string {
    return `${this.prefix}oauth-state:${state}`;
  }
  /** The fingerprint of the key connection secrets are sealed with (processes must share the key). */
  secretKeyCheck(): string {
    return `${this.prefix}secret-key-check`;
  }
  /** Each document of a connector source: its change token, title and chunk count (JSON by document id). */
  sourceDocuments(chatbotId: string, sourceId: string): string {
    return `${this.prefix}{b:${chatbotId}}:source-docs:${sourceId}`;
  }
  /** The PUBLIC_URL the gateways are reached at, published by them so the CLI builds links from it. */
  gatewayPublicUrl(): string {
    return `${this.prefix}gateway-public-url`;
  }
  /** What the gateway that started last is set up with (GatewaySetup, JSON), for `doctor`. */
  gatewaySetup(): string {
    return `${this.prefix}gateway-setup`;
  }
  /** Whether the gateways crawl private addresses (`CRAWL_ALLOW_PRIVATE`), published for the CLI's checks. */
  gatewayCrawlAllowsPrivate(): string {
    return `${this.prefix}gateway-crawl-allow-private`;
  }
  /** How far a running gateway's in-process search index has loaded (JSON; expires with its presence). */
  gatewaySearchIndex(gatewayId: string): string {
    return `${this.prefix}gateway:${gatewayId}:search-index`;
  }
  /** Gateway processes that are running, scored by when their last word lapses (ms). */
  gateways(): string {
    return `${this.prefix}gateways`;
  }
}
