/**
 * One figure of the actors benchmark, in a process of its own started by actors-benchmark.ts with
 * `--expose-gc` (so the heap can be collected before it is measured, and no figure inherits another's
 * heap). `node --expose-gc bench/actors-child.ts <figure>` prints one JSON line of results on stdout
 * and exits 0, or prints one line on stderr and exits 1.
 *
 * The router runs over in-memory fakes with the method shapes of its dependencies, each answering at
 * once: the figures are the actor layer's own cost (nact, the router's bookkeeping, the behaviour).
 */

import { DEFAULT_SETTINGS } from '../src/chatbots/chatbot-settings.ts';
import { randomUUID } from 'node:crypto';
import nact from 'nact';
import type { Ref } from 'nact';
import { TurnPipeline, type InboundMessage, type TurnPipelineDeps } from '../src/conversations/turn-pipeline.ts';
import { ConversationRouter } from '../src/actors/conversation-router.ts';
import { systemClock } from '../src/clock.ts';
import type { LlmProvider } from '../src/llm/llm-provider.ts';
import { TurnRetrieval } from '../src/rag/turn-retrieval.ts';
import { createLogger } from '../src/logger.ts';
import type { Chatbot } from '../src/chatbots/chatbot.ts';
import type { EventRelay } from '../src/webhooks/event-relay.ts';
import type { ConversationStore, ConversationView, TurnEnd, TurnStart } from '../src/store/conversation-store.ts';
import type { QuotaDecision, QuotaStore } from '../src/admission/quota-store.ts';

/** Sessions messaged concurrently: the unit every figure advances by. */
export const BATCH = 10_000;
export const IDLE_ACTORS = 100_000;
export const THROUGHPUT_SESSIONS = 10_000;
export const THROUGHPUT_MESSAGES = 200_000;
export const TOUCHED_CONVERSATIONS = 1_000_000;
/** Idle time before passivation in the RSS figure; the sweep runs every IDLE_MS as well. */
export const PASSIVATION_IDLE_MS = 50;

/** Results of `idle-memory`: heap bytes per live actor after one message each. */
export interface IdleMemoryResult {
  actors: number;
  bareNactBytes: number;
  conversationBytes: number;
}

/** Results of `throughput`: messages per second to live actors. */
export interface ThroughputResult {
  messages: number;
  sessions: number;
  bareNactPerSec: number;
  routerPerSec: number;
}

/** Results of `passivation`: the process after one message to each of many conversations. */
export interface PassivationResult {
  conversations: number;
  idleMs: number;
  seconds: number;
  peakLive: number;
  liveAtEnd: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** V8's heap as reserved from the system; RSS also holds pages V8 keeps pooled for reuse. */
  heapTotalBytes: number;
}

const MESSAGE = 'What are your opening hours?';
const REPLY = 'We are open from 9:00 to 17:00, Monday to Friday.';
const DAY_MS = 24 * 3600 * 1000;

const chatbot: Chatbot = {
  id: randomUUID(),
  user_id: randomUUID(),
  name: 'Bench Bot',
  slug: 'bench-bot',
  provider: 'chatgpt',
  model: 'gpt-4o-mini',
  is_active: true,
  created_at: '2026-11-22T00:00:00.000000+00:00',
  system_prompt: 'You are a helpful assistant for this website.',
  fallback_message: "Sorry, I don't have an answer to that right now.",
  settings: structuredClone(DEFAULT_SETTINGS),
};

/**
 * The router's dependencies as instant in-memory fakes: every turn starts on an existing
 * conversation with no history, is stored, and the LLM answers at once.
 */
function instantDeps(): TurnPipelineDeps {
  const conversations = {
    beginTurn: (): Promise<TurnStart> =>
      Promise.resolve({
        kind: 'started',
        conversationId: 'bench-conversation',
        isNew: false,
        source: 'api',
        takenOverBy: null,
        escalated: false,
        createdAt: '2026-11-22T00:00:00.000000+00:00',
        announced: false,
        token: 'bench-token',
        history: [],
        entry: { id: 'bench-entry', json: '{}' },
        overdue: [],
      }),
    endTurn: (): Promise<TurnEnd> =>
      Promise.resolve({
        outcome: 'stored',
        createdAt: '2026-11-22T00:00:00.000000+00:00',
        fallbackStreak: 0,
        announced: false,
      }),
    renewLease: (): Promise<boolean> => Promise.resolve(true),
    get: (): Promise<ConversationView> =>
      Promise.resolve({
        conversation_id: 'bench-conversation',
        chatbot_id: chatbot.id,
        session_id: 'bench',
        source: 'api',
        escalated_at: null,
        taken_over_by: null,
      }),
  };
  const quota = {
    consume: (): Promise<QuotaDecision> => Promise.resolve('counted'),
    refund: (): Promise<void> => Promise.resolve(),
  };
  const llm: LlmProvider = { generate: () => Promise.resolve({ text: REPLY }) };
  return {
    conversations: conversations as unknown as ConversationStore,
    quota: quota as unknown as QuotaStore,
    retrieval: new TurnRetrieval({
      retriever: { retrieve: () => Promise.resolve([]) },
      providers: { chatgpt: llm, gemini: llm, ollama: llm },
      clock: systemClock,
      logger: createLogger('silent'),
      rewriteTimeoutMs: 60_000,
    }),
    providers: { chatgpt: llm, gemini: llm, ollama: llm },
    escalate: () => Promise.resolve(),
    feed: { publish: () => Promise.resolve(), forScript: () => Promise.resolve(undefined) },
    // The bench's turns are REST API turns, which never stream.
    stream: () => {
      throw new Error('API turns do not stream');
    },
    relevanceFloor: () => 0,
    relay: {
      register: () => Promise.resolve(),
      deliver: () => Promise.resolve(1),
    } as unknown as EventRelay,
    clock: systemClock,
    logger: createLogger('silent'),
    limits: { rateLimit: 100_000_000, rateWindowMs: 60_000, leaseMs: 30_000 },
  };
}

const inbound = (sessionId: string): InboundMessage => ({ chatbot, sessionId, content: MESSAGE, channel: 'api' });

/** Sends one message to each of sessions [from, to) at once; fails unless every one is answered. */
async function sendBatch(router: ConversationRouter, prefix: string, from: number, to: number): Promise<void> {
  const replies = [];
  for (let i = from; i < to; i += 1) replies.push(router.send(inbound(`${prefix}${i}`)));
  for (const outcome of await Promise.all(replies)) {
    if (outcome.kind !== 'reply' || outcome.text !== REPLY) {
      throw new Error(`a turn ended ${outcome.kind === 'failed' ? `failed: ${outcome.error.message}` : outcome.kind}`);
    }
  }
}

/** Messages `sessions` sessions once each, BATCH at a time. */
async function touch(router: ConversationRouter, prefix: string, sessions: number, afterBatch = () => {}) {
  for (let from = 0; from < sessions; from += BATCH) {
    await sendBatch(router, prefix, from, Math.min(sessions, from + BATCH));
    afterBatch();
  }
}

/**
 * The least a router could be: a map from session to a plain nact actor that answers each message at
 * once. The baseline the conversation router is compared with.
 */
class BareNactRouter {
  private readonly system = nact.start();
  private readonly live = new Map<string, Ref<() => void>>();
  private spawned = 0;

  send(sessionId: string): Promise<void> {
    let ref = this.live.get(sessionId);
    if (ref === undefined) {
      this.spawned += 1;
      ref = nact.spawn(
        this.system,
        (state: undefined, answer: () => void) => {
          answer();
          return state;
        },
        `a${this.spawned.toString(36)}`,
      );
      this.live.set(sessionId, ref);
    }
    const target = ref;
    return new Promise((resolve) => nact.dispatch(target, resolve));
  }

  async touch(prefix: string, sessions: number): Promise<void> {
    for (let from = 0; from < sessions; from += BATCH) {
      const replies = [];
      for (let i = from; i < Math.min(sessions, from + BATCH); i += 1) replies.push(this.send(`${prefix}${i}`));
      await Promise.all(replies);
    }
  }

  stop(): void {
    this.live.clear();
    nact.stop(this.system);
  }
}

const newRouter = (idleMs: number) =>
  new ConversationRouter(new TurnPipeline(instantDeps()), { idleMs, clock: systemClock });

/** Lets pending immediates and timers (nact's stop callbacks) run, then collects the heap, twice. */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the actors benchmark child needs node --expose-gc');
  for (let i = 0; i < 2; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
}

/** Runs code paths once on a router that is then thrown away, so compilation is not measured. */
async function warmUp(): Promise<void> {
  const bare = new BareNactRouter();
  await bare.touch('warm-', BATCH);
  bare.stop();
  const router = newRouter(DAY_MS);
  await touch(router, 'warm-', BATCH);
  await touch(router, 'warm-', BATCH);
  router.stop();
  await collect();
}

/** Heap bytes each live actor adds, after one message each, bare nact first. */
async function idleMemory(): Promise<IdleMemoryResult> {
  await warmUp();

  let before = process.memoryUsage().heapUsed;
  const bare = new BareNactRouter();
  await bare.touch('idle-', IDLE_ACTORS);
  await collect();
  const bareNactBytes = (process.memoryUsage().heapUsed - before) / IDLE_ACTORS;
  bare.stop();
  await collect();

  before = process.memoryUsage().heapUsed;
  const router = newRouter(DAY_MS);
  router.start();
  await touch(router, 'idle-', IDLE_ACTORS);
  await collect();
  const conversationBytes = (process.memoryUsage().heapUsed - before) / IDLE_ACTORS;
  if (router.size !== IDLE_ACTORS) throw new Error(`expected ${IDLE_ACTORS} live actors, found ${router.size}`);
  router.stop();
  return { actors: IDLE_ACTORS, bareNactBytes, conversationBytes };
}

/** Messages per second to THROUGHPUT_SESSIONS live actors, bare nact first. */
async function throughput(): Promise<ThroughputResult> {
  await warmUp();
  const rounds = THROUGHPUT_MESSAGES / THROUGHPUT_SESSIONS;

  const bare = new BareNactRouter();
  await bare.touch('tp-', THROUGHPUT_SESSIONS);
  let start = performance.now();
  for (let round = 0; round < rounds; round += 1) await bare.touch('tp-', THROUGHPUT_SESSIONS);
  const bareNactPerSec = THROUGHPUT_MESSAGES / ((performance.now() - start) / 1000);
  bare.stop();
  await collect();

  const router = newRouter(DAY_MS);
  router.start();
  await touch(router, 'tp-', THROUGHPUT_SESSIONS);
  start = performance.now();
  for (let round = 0; round < rounds; round += 1) await touch(router, 'tp-', THROUGHPUT_SESSIONS);
  const routerPerSec = THROUGHPUT_MESSAGES / ((performance.now() - start) / 1000);
  router.stop();
  return { messages: THROUGHPUT_MESSAGES, sessions: THROUGHPUT_SESSIONS, bareNactPerSec, routerPerSec };
}

/** One message to each of TOUCHED_CONVERSATIONS sessions with passivation on; then the process's RSS. */
async function passivation(): Promise<PassivationResult> {
  await warmUp();
  const router = newRouter(PASSIVATION_IDLE_MS);
  router.start();
  let peakLive = 0;
  const start = performance.now();
  await touch(router, 'conv-', TOUCHED_CONVERSATIONS, () => {
    peakLive = Math.max(peakLive, router.size);
  });
  const seconds = (performance.now() - start) / 1000;
  // Long enough for the last batch to go idle and be swept.
  await new Promise((resolve) => setTimeout(resolve, 4 * PASSIVATION_IDLE_MS));
  await collect();
  const { rss, heapUsed, heapTotal } = process.memoryUsage();
  const result = {
    conversations: TOUCHED_CONVERSATIONS,
    idleMs: PASSIVATION_IDLE_MS,
    seconds,
    peakLive,
    liveAtEnd: router.size,
    rssBytes: rss,
    heapUsedBytes: heapUsed,
    heapTotalBytes: heapTotal,
  };
  router.stop();
  return result;
}

const FIGURES: Record<string, () => Promise<object>> = {
  'idle-memory': idleMemory,
  throughput,
  passivation,
};

// Run as a script (not when actors-benchmark.ts imports the constants and types above).
if (process.argv[1] === import.meta.filename) {
  const figure = FIGURES[process.argv[2] ?? ''];
  if (figure === undefined) {
    console.error(`actors-child: unknown figure "${process.argv[2]}"; known: ${Object.keys(FIGURES).join(', ')}`);
    process.exitCode = 1;
  } else {
    try {
      console.log(JSON.stringify(await figure()));
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    }
  }
}
