import { PerKeyQueue } from '../per-key-queue.ts';
import type { ChunkStore } from '../store/chunk-store.ts';
import type { SearchIndexProgress } from '../store/gateway-presence.ts';
import type { ChunkRecord } from './chunk.ts';
import type { SearchEngine } from './search-engine.ts';

/** How far a background load has come: chunk records read of those listed when it began. */
export type LoadProgress = SearchIndexProgress;

/** What the loads need: the engine they fill, the records, and the index's dimension check. */
export interface ChatbotLoadsDeps {
  engine: Pick<SearchEngine, 'upsert'>;
  chunks: Pick<ChunkStore, 'keysByChatbot' | 'load'>;
  /** The records the engine can take; each other one is handed to `onBad`. */
  usable(chunks: ChunkRecord[], onBad: (chunk: ChunkRecord, reason: string) => void): ChunkRecord[];
}

/** Options, merged with defaults when the loads are built. */
export interface ChatbotLoadsOptions {
  /** Chunk records read from Redis at once (default 500). */
  batchSize?: number;
  /**
   * Awaited before each batch the background load reads (a load a search asked for is not paced):
   * by default one turn of the event loop, so chats are served while the index loads; tests hold
   * the load here.
   */
  pace?: () => Promise<void>;
  /** Told after the listing and after every batch (the gateway publishes it for `status`). */
  onProgress?: (progress: LoadProgress) => void;
  /** Told when listing the chunks failed (it is tried again after `retryDelay`). */
  onListingFailed?: (error: unknown, attempt: number) => void;
  /** Awaited before listing again after a failure (default: 0.25 s doubling up to 5 s). */
  retryDelay?: (attempt: number) => Promise<void>;
}

/** A source whose stored chunk the engine could not take. */
export interface BadSource {
  chatbotId: string;
  sourceId: string;
  reason: string;
}

/** One chatbot's place in the load. */
interface ChatbotState {
  /** pending: listed, not loaded; loading: its load is queued or running; loaded: in the engine. */
  phase: 'pending' | 'loading' | 'loaded';
  /** The keys listed for it, until its load has read them. */
  keys: string[];
  /** Settles when its load has (while loading). */
  loaded?: Promise<void>;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const backOff = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.min(250 * 2 ** (attempt - 1), 5000)).unref());

/**
 * The in-process engine's load from Redis, chatbot by chatbot, in the background. Every piece of
 * engine work for a chatbot — its load and each change to its sources — runs on that chatbot's own
 * queue, one after another, and each job reads Redis only when it runs: so a change that arrives
 * while the chatbot loads is applied after every batch of the load, from a read made after the
 * change, and no batch read earlier can undo it. A search for a chatbot not loaded yet loads it first
 * (searches of one chatbot share that load), and is then answered from the index, exactly.
 */
export class ChatbotLoads {
  readonly #deps: ChatbotLoadsDeps;
  readonly #batchSize: number;
  readonly #pace: () => Promise<void>;
  readonly #onProgress: (progress: LoadProgress) => void;
  readonly #onListingFailed: (error: unknown, attempt: number) => void;
  readonly #retryDelay: (attempt: number) => Promise<void>;
  readonly #states = new Map<string, ChatbotState>();
  /** Each chatbot's engine work, one job after another: its load and every change to it, in the order asked. */
  readonly #queue = new PerKeyQueue<string>();
  /**
   * Whether the chatbots were listed, once that is known: true at once when no load was started, false
   * when the load was stopped before it could list them.
   */
  #listed: Promise<boolean> = Promise.resolve(true);
  #progress: LoadProgress = { loaded: 0, total: 0, done: true };
  #bad = new Map<string, BadSource>();
  /** Chunks the loads put into the engine (a search's load included). */
  #good = 0;
  #stopped = false;

  constructor(deps: ChatbotLoadsDeps, options: ChatbotLoadsOptions = {}) {
    const {
      batchSize = 500,
      pace = yieldToEventLoop,
      onProgress = () => {},
      onListingFailed = () => {},
      retryDelay = backOff,
    } = options;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    this.#deps = deps;
    this.#batchSize = batchSize;
    this.#pace = pace;
    this.#onProgress = onProgress;
    this.#onListingFailed = onListingFailed;
    this.#retryDelay = retryDelay;
  }

  get progress(): LoadProgress {
    return { ...this.#progress };
  }

  /**
   * Lists every chatbot's chunks, then loads the chatbots one after another (those a search loaded
   * meanwhile are skipped); resolves with how many chunks went into the engine and the sources whose
   * chunks were skipped (each once), or early once stopped. Call it once.
   */
  async loadAll(): Promise<{ chunks: number; bad: BadSource[]; stopped: boolean }> {
    this.#progress = { loaded: 0, total: undefined, done: false };
    // Searches and changes wait for the listing, rather than find nothing: a listing that failed (Redis
    // unreachable a moment) is tried again until it succeeds or the load is stopped.
    const listing = this.#listUntilListed();
    // The listing's failure is reported below; the waiters hear that there is no listing.
    this.#listed = listing.then(
      () => true,
      () => false,
    );
    let order: string[];
    try {
      order = await listing;
    } catch (error) {
      if (this.#stopped) return { chunks: this.#good, bad: [], stopped: true };
      throw error;
    }
    this.#onProgress(this.progress);
    for (const chatbotId of order) {
      if (this.#stopped) return { chunks: this.#good, bad: [], stopped: true };
      await this.#ensure(chatbotId, true);
    }
    this.#progress.done = true;
    this.#onProgress(this.progress);
    const bad = [...this.#bad.values()];
    this.#bad.clear();
    return { chunks: this.#good, bad, stopped: false };
  }

  /** `#list`, tried again after each failure until it succeeds; rejects with the last failure once stopped. */
  async #listUntilListed(): Promise<string[]> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#list();
      } catch (error) {
        if (this.#stopped) throw error;
        this.#onListingFailed(error, attempt);
        await this.#retryDelay(attempt);
        if (this.#stopped) throw error;
      }
    }
  }

  /** Lists every chatbot's chunk keys into its state (pending); resolves with the chatbots in load order. */
  async #list(): Promise<string[]> {
    const listed = await this.#deps.chunks.keysByChatbot();
    let total = 0;
    // In key order, chatbot by chatbot: the same listing loads the same way every time.
    const order = [...listed.keys()].sort();
    for (const chatbotId of order) {
      const keys = listed.get(chatbotId)!.sort();
      const state = this.#states.get(chatbotId);
      if (state === undefined) this.#states.set(chatbotId, { phase: 'pending', keys });
      else Object.assign(state, { phase: 'pending', keys });
      total += keys.length;
    }
    this.#progress.total = total;
    return order;
  }

  /** Ends the background load before its next chatbot (the gateway is stopping); `loadAll` resolves. */
  stop(): void {
    this.#stopped = true;
  }

  /** Resolves when the chatbot's chunks are in the engine: at once when loaded, else after its load. */
  async ready(chatbotId: string): Promise<void> {
    if (this.#states.get(chatbotId)?.phase === 'loaded') return;
    await this.#afterListing();
    if (this.#states.has(chatbotId)) await this.#ensure(chatbotId, false);
  }

  /**
   * Runs `work` (a change to the chatbot's chunks in the engine, reading Redis when it runs) on the
   * chatbot's queue: after its load, if one is queued or running, and after every change asked before.
   */
  async change(chatbotId: string, work: () => Promise<void>): Promise<void> {
    await this.#afterListing();
    let state = this.#states.get(chatbotId);
    if (state === undefined) {
      // Not listed: it had no chunks when the load began, so everything it has came by changes.
      state = { phase: 'loaded', keys: [] };
      this.#states.set(chatbotId, state);
    }
    return this.#queue.run(chatbotId, work);
  }

  /** Resolves once the chatbots are listed; rejects when the load was stopped before that. */
  async #afterListing(): Promise<void> {
    if (!(await this.#listed)) throw new Error('the search index load was stopped before its chunks were listed');
  }

  /** The chatbot's load, started (on its queue) unless it is loaded or loading; resolves when it is loaded. */
  async #ensure(chatbotId: string, background: boolean): Promise<void> {
    const state = this.#states.get(chatbotId)!;
    if (state.phase === 'loaded') return;
    if (state.phase === 'loading') return state.loaded;
    state.phase = 'loading';
    const loading = this.#queue.run(chatbotId, () => this.#load(state, background));
    state.loaded = loading;
    try {
      await loading;
      state.phase = 'loaded';
      state.keys = [];
    } catch (error) {
      // The next search (or the next load) tries again; what was read is read again, and replaced.
      state.phase = 'pending';
      throw error;
    } finally {
      state.loaded = undefined;
    }
  }

  async #load(state: ChatbotState, background: boolean): Promise<void> {
    for (let start = 0; start < state.keys.length; start += this.#batchSize) {
      if (background) await this.#pace();
      if (background && this.#stopped) break;
      const keys = state.keys.slice(start, start + this.#batchSize);
      const good = this.#deps.usable(await this.#deps.chunks.load(keys), (chunk, reason) => {
        const { chatbotId, sourceId } = chunk;
        this.#bad.set(`${chatbotId}/${sourceId}`, { chatbotId, sourceId, reason });
      });
      await this.#deps.engine.upsert(good);
      this.#good += good.length;
      this.#progress.loaded += keys.length;
      this.#onProgress(this.progress);
    }
  }
}
