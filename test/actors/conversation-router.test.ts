import t from 'tap';
import { ConversationRouter } from '../../src/actors/conversation-router.ts';
import { fixedTimeClock, systemClock, type Clock } from '../../src/clock.ts';
import { TurnPipeline, type TurnOutcome } from '../../src/conversations/turn-pipeline.ts';
import type { ChatPrompt, LlmProvider, LlmReply } from '../../src/llm/llm-provider.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { TurnRetrieval } from '../../src/rag/turn-retrieval.ts';
import { AccountStore } from '../../src/store/account-store.ts';
import { ChatbotStore } from '../../src/store/chatbot-store.ts';
import { EventRelay } from '../../src/webhooks/event-relay.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';
import { ConversationStore } from '../../src/store/conversation-store.ts';
import { QuotaStore } from '../../src/admission/quota-store.ts';
import { connectRedis, plainConnection } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SignalBus } from '../../src/redis/signal-bus.ts';
import { ReplyStream } from '../../src/conversations/reply-stream.ts';
import { LogCapture } from '../support/log-capture.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { startRedis } from '../support/redis-server.ts';
import { until } from '../support/until.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  await server.stop();
});

/** Time the tests move by hand, timers included. */
const clock = new SimulatedClock();
const keys = new RedisKeys('sb:');
const signals = new SignalBus(redis, keys, createLogger('silent'));
const pending = new PendingEventStore(redis, keys, clock, 10_000);
const conversations = new ConversationStore(redis, keys, clock, pending);
const relay = new EventRelay(pending, { emit: () => Promise.resolve() }, createLogger('silent'), clock);
const user = await new AccountStore(redis, keys, clock, ['scale']).create('router@example.com', 'scale');
const chatbot = await new ChatbotStore(redis, keys, clock).create(user.id, { name: 'Router Bot' });

/**
 * An in-process LLM: answers with the number of turns it was shown, after an optional gate, and
 * reports as many input tokens as turns and 2 output tokens.
 */
class EchoProvider implements LlmProvider {
  prompts: ChatPrompt[] = [];
  gate: Promise<void> | undefined;
  down = false;
  async generate(_model: string, prompt: ChatPrompt): Promise<LlmReply> {
    this.prompts.push(prompt);
    if (this.gate) await this.gate;
    if (this.down) throw new Error('provider down');
    return { text: `seen ${prompt.turns.length}`, usage: { input_tokens: prompt.turns.length, output_tokens: 2 } };
  }
}
const provider = new EchoProvider();

function makeRouter(
  idleMs: number,
  { sweepEveryMs, routerClock = clock, logger = createLogger('silent') }: RouterSetup = {},
) {
  const pipeline = makePipeline({ pipelineClock: routerClock, logger });
  return new ConversationRouter(pipeline, { idleMs, clock: routerClock, sweepEveryMs });
}

/** A turn pipeline over the test's Redis; the echo provider, a relay that writes nothing, unless given. */
function makePipeline({
  provider: llm = provider,
  pipelineClock = clock,
  logger = createLogger('silent'),
  eventRelay = relay,
  store = conversations,
  leaseMs = 30_000,
}: {
  provider?: LlmProvider;
  pipelineClock?: Clock;
  logger?: Logger;
  eventRelay?: EventRelay;
  store?: ConversationStore;
  leaseMs?: number;
} = {}) {
  const providers = { chatgpt: llm, gemini: llm, ollama: llm };
  const retriever = { retrieve: () => Promise.resolve([]) };
  return new TurnPipeline({
    conversations: store,
    quota: new QuotaStore(redis, keys, clock, { scale: 1_000_000 }),
    retrieval: new TurnRetrieval({ retriever, providers, clock: pipelineClock, logger, rewriteTimeoutMs: 5000 }),
    providers,
    relay: eventRelay,
    escalate: () => Promise.resolve(),
    feed: { publish: () => Promise.resolve(), forScript: () => Promise.resolve(undefined) },
    stream: (chatbotId, sessionId) => new ReplyStream({ signals, logger }, chatbotId, sessionId),
    relevanceFloor: () => 0,
    clock: pipelineClock,
    logger,
    limits: { rateLimit: 1_000_000, rateWindowMs: 60_000, leaseMs },
  });
}

interface RouterSetup {
  sweepEveryMs?: number;
  routerClock?: Clock;
  logger?: Logger;
}

const send = (router: ConversationRouter, sessionId: string, content: string) =>
  router.send({ chatbot, sessionId, content, channel: 'api' });

t.test('an idle actor passivates; the next message rehydrates the conversation from Redis', async (t) => {
  const router = makeRouter(1000);
  t.teardown(() => router.stop());
  t.match(await send(router, 'p-1', 'one'), { kind: 'reply', text: 'seen 1', createdAt: String });
  t.equal(router.size, 1);
  await clock.advance(500);
  t.equal(router.sweep(), 0, 'not idle long enough');
  await clock.advance(600);
  t.equal(router.sweep(), 1);
  t.equal(router.size, 0);
  t.match(
    await send(router, 'p-1', 'two'),
    { kind: 'reply', text: 'seen 3', createdAt: String },
    'the history came back',
  );
  t.same(
    provider.prompts.at(-1)!.turns.map((turn) => turn.content),
    ['one', 'seen 1', 'two'],
  );
});

t.test('a message routed just before a sweep is never lost', async (t) => {
  // Time moved without a turn of the event loop, so the message is still unprocessed at the sweep.
  let now = clock.nowMicros();
  const router = makeRouter(1000, { routerClock: fixedTimeClock(() => now) });
  t.teardown(() => router.stop());
  await send(router, 'p-2', 'warm up');
  now += 5_000_000;
  // Dispatched, not yet processed: the sweep must leave the actor alone.
  const pending = send(router, 'p-2', 'just in time');
  now += 5_000_000;
  t.equal(router.sweep(), 0);
  t.match(await pending, { kind: 'reply', text: 'seen 3', createdAt: String });
});

t.test('an actor answered early (takeover) stays alive until its late reply is stored as discarded', async (t) => {
  const router = makeRouter(1000);
  t.teardown(() => router.stop());
  let open!: () => void;
  provider.gate = new Promise((resolve) => (open = resolve));
  const pending = send(router, 'p-3', 'slow one');
  await until(() => provider.prompts.at(-1)?.turns.at(-1)?.content === 'slow one', 'the LLM called');
  await conversations.takeOver(chatbot.id, 'p-3', 'agent');
  router.signal(chatbot.id, 'p-3');
  t.same(await pending, { kind: 'silent' });
  await clock.advance(10_000);
  t.equal(router.sweep(), 0, 'the LLM call is still in flight');
  open();
  provider.gate = undefined;
  await until(async () => (await conversations.discarded(chatbot.id, 'p-3')).length > 0, 'the reply discarded');
  await clock.advance(10_000);
  t.equal(router.sweep(), 1);
  t.same(
    (await conversations.transcript(chatbot.id, 'p-3')).messages.map((m) => m.role),
    ['user'],
  );
});

t.test('passivating as eagerly as possible under load loses nothing (real time)', async (t) => {
  const router = makeRouter(1, { sweepEveryMs: 1, routerClock: systemClock });
  router.start();
  t.teardown(() => router.stop());
  const sessions = Array.from({ length: 20 }, (_, i) => `stress-${i}`);
  const outcomes: TurnOutcome[] = [];
  await Promise.all(
    sessions.map(async (sessionId) => {
      for (let i = 0; i < 10; i += 1) {
        outcomes.push(await send(router, sessionId, `m${i}`));
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
      }
    }),
  );
  t.equal(outcomes.length, 200);
  t.ok(outcomes.every((o) => o.kind === 'reply'));
  for (const sessionId of sessions) {
    const transcript = await conversations.transcript(chatbot.id, sessionId);
    t.same(
      transcript.messages.filter((m) => m.role === 'user').map((m) => m.content),
      Array.from({ length: 10 }, (_, i) => `m${i}`),
    );
    t.equal(transcript.messages.length, 20);
  }
  // Passivated in the end: the sweep (every 1 ms) stops each actor once its last turn has ended.
  await until(() => router.size === 0, 'everything passivated');
});

t.test('a conversation leased by another process waits, then continues in order', async (t) => {
  // Real time: the lease lapses in Redis, and the retries back off by the router's timers.
  const router = makeRouter(60_000, { routerClock: systemClock });
  t.teardown(() => router.stop());
  await send(router, 'p-5', 'first');
  // Another process holds the lease for 150 ms.
  await redis.set(keys.conversationLease(chatbot.id, 'p-5'), 'other-process:1', {
    expiration: { type: 'PX', value: 150 },
  });
  const started = Date.now();
  t.match(await send(router, 'p-5', 'second'), { kind: 'reply', text: 'seen 3', createdAt: String });
  t.ok(Date.now() - started >= 140, 'it waited for the lease');
});

t.test('stopping waits for the turns in progress, so no conversation keeps a lease', async (t) => {
  const router = makeRouter(1000);
  let open!: () => void;
  provider.gate = new Promise((resolve) => (open = resolve));
  const pending = send(router, 'p-stop', 'in flight at shutdown');
  await until(() => provider.prompts.at(-1)?.turns.at(-1)?.content === 'in flight at shutdown', 'the LLM called');
  t.equal(await redis.exists(keys.conversationLease(chatbot.id, 'p-stop')), 1, 'the turn holds the lease');
  // The LLM answers as soon as the stop has begun: a stop that did not wait would end before the turn
  // (which still stores the reply and gives the lease back) could.
  const ended: string[] = [];
  const stopping = router.stop(5000).then(() => ended.push('stop'));
  void pending.then(() => ended.push('turn'));
  provider.gate = undefined;
  open();
  await stopping;
  t.same(ended, ['turn', 'stop'], 'the stop waits for the turn');
  t.match(await pending, { kind: 'reply', text: 'seen 1' });
  // Read on the plain connection: the turn deleted the lease on it, and the caching one may hear of
  // the deletion a moment after the turn has ended.
  t.equal(await plainConnection(redis).exists(keys.conversationLease(chatbot.id, 'p-stop')), 0, 'no lease left behind');
});

t.test('a turn that throws fails alone: the messages queued behind it are still answered', async (t) => {
  const router = makeRouter(1000);
  t.teardown(() => router.stop());
  let open!: () => void;
  provider.gate = new Promise((resolve) => (open = resolve));
  const first = send(router, 'p-throw', 'first');
  await until(() => provider.prompts.at(-1)?.turns.at(-1)?.content === 'first', 'the LLM called');
  // Queued behind the turn in flight: the second throws after it left the queue (a channel's bug).
  const onTyping = () => {
    throw new Error('typing indicator exploded');
  };
  const second = router.send({ chatbot, sessionId: 'p-throw', content: 'second', channel: 'api', onTyping });
  // Both are in the actor's mailbox already: the router hands a message to its actor as it is sent.
  const third = send(router, 'p-throw', 'third');
  provider.gate = undefined;
  open();
  t.match(await first, { kind: 'reply', text: 'seen 1' });
  t.match(await second, { kind: 'failed', error: { message: 'typing indicator exploded' } });
  t.match(await third, { kind: 'reply', text: 'seen 4' });
});

t.test('each turn that called the LLM logs one metrics line: numbers, no text', async (t) => {
  const logs = new LogCapture();
  const router = makeRouter(1000, { logger: createLogger('info', logs) });
  t.teardown(() => router.stop());
  await send(router, 'p-metrics', 'how much is shipping?');
  provider.down = true;
  t.teardown(() => (provider.down = false));
  t.match(await send(router, 'p-metrics', 'and to Norway?'), { kind: 'failed' });
  const common = {
    level: 30,
    chatbot_id: chatbot.id,
    channel: 'api',
    provider: chatbot.provider,
    model: chatbot.model,
  };
  t.same(logs.withMessage('turn metrics'), [
    {
      ...common,
      retrieve_ms: 0,
      best_relevance: 0,
      llm: { status: 'ok', ms: 0, input_tokens: 1, output_tokens: 2 },
      msg: 'turn metrics',
    },
    {
      ...common,
      retrieve_ms: 0,
      best_relevance: 0,
      llm: { status: 'failed', ms: 0, input_tokens: null, output_tokens: null },
      msg: 'turn metrics',
    },
  ]);
});

// Issue 18: a renewal that found the lease gone was ignored; the turn ran on to writes the fenced
// scripts refuse, and its requester waited for the LLM to learn it.
t.test('a turn whose lease is lost stops at once: its LLM call is aborted and its requester told', async (t) => {
  const aborted: AbortSignal[] = [];
  const hanging: LlmProvider = {
    generate: (_model, _prompt, options) =>
      new Promise((_resolve, reject) => {
        aborted.push(options!.signal!);
        options!.signal!.addEventListener('abort', () => reject(new Error('aborted')));
      }),
  };
  const logs = new LogCapture();
  const logger = createLogger('info', logs);
  // Renewed every 100 ms.
  const pipeline = makePipeline({ provider: hanging, logger, leaseMs: 300 });
  const router = new ConversationRouter(pipeline, { idleMs: 60_000, clock });
  t.teardown(() => router.stop());
  const answer = send(router, 'p-lost', 'are you there?');
  await until(() => aborted.length > 0, 'the LLM called');
  // Another gateway took the conversation over after this one's lease lapsed.
  await redis.set(keys.conversationLease(chatbot.id, 'p-lost'), 'another-gateway');
  let told = false;
  void answer.then(() => (told = true));
  await clock.advance(99);
  t.equal(told, false, 'nothing before the next renewal');
  await clock.advance(1);
  // The renewal's answer is a Redis round trip: awaited, not timed.
  t.same(await answer, { kind: 'failed', error: new Error('conversation lease lost during the turn') });
  t.equal(aborted[0]!.aborted, true, 'the LLM call was aborted');
  t.equal(await redis.get(keys.conversationLease(chatbot.id, 'p-lost')), 'another-gateway', 'its lease left alone');
  t.same(
    (await conversations.transcript(chatbot.id, 'p-lost')).messages.map((m) => m.role),
    ['user'],
  );
  t.same(logs.withMessage('conversation lease lost; turn stopped'), [
    { level: 40, chatbot_id: chatbot.id, msg: 'conversation lease lost; turn stopped' },
  ]);
});

t.test('a turn renews its lease while its message is announced, not only once the LLM is called', async (t) => {
  // The announcement writes the turn's webhook deliveries; a loaded Redis can make that take a good
  // part of a short lease (the likely cause of a chat's 500 in the cluster test bed under CI load).
  let opened!: () => void;
  const gate = new Promise<void>((resolve) => (opened = resolve));
  const emitting: string[] = [];
  const slowRelay = new EventRelay(
    pending,
    {
      emit: async (event) => {
        emitting.push(event.event);
        await gate;
      },
    },
    createLogger('silent'),
    clock,
  );
  const renewals: string[] = [];
  class CountingStore extends ConversationStore {
    override renewLease(chatbotId: string, sessionId: string, token: string, leaseMs: number): Promise<boolean> {
      renewals.push(sessionId);
      return super.renewLease(chatbotId, sessionId, token, leaseMs);
    }
  }
  const pipeline = makePipeline({
    eventRelay: slowRelay,
    store: new CountingStore(redis, keys, clock, pending),
    leaseMs: 300,
  });
  const router = new ConversationRouter(pipeline, { idleMs: 60_000, clock });
  t.teardown(() => router.stop());
  const answer = send(router, 'p-announce', 'hello');
  await until(() => emitting.length > 0, 'the announcement');
  await clock.advance(100);
  t.same(renewals, ['p-announce'], 'renewed a third of a lease in, the announcement still writing');
  opened();
  t.match(await answer, { kind: 'reply', text: 'seen 1' });
});
