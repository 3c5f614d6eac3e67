import pLimit from 'p-limit';
import type { UnansweredReason } from '../contract/unanswered.ts';
import { asksForHuman } from '../conversations/escalation-intent.ts';
import type { Generation } from '../conversations/turn-generation.ts';
import type { Clock, Timer } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { QuestionEmbedder } from '../rag/query-embedder.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import type { RecordReply } from '../store/unanswered-scripts.ts';
import {
  encodeVector,
  type UnansweredCandidates,
  type UnansweredOccurrence,
  type UnansweredStore,
} from '../store/unanswered-store.ts';
import { parseTimestamp } from '../timestamp.ts';
import { groupingThreshold, nearestGroup } from './grouping-threshold.ts';
import { clipQuestion, questionKey } from './question-key.ts';

/** Matching attempts before a recording takes whatever group the last match found. */
const MAX_ATTEMPTS = 5;
/** Questions (and escalations to look up) one process keeps waiting; beyond them one is dropped (and logged). */
const MAX_PENDING = 1000;
/**
 * Batches (and escalation lookups) one process runs at once. Recording is bookkeeping beside the turns: under load it waits
 * its turn rather than competing with visitors' turns for Redis and the event loop (run side by side by
 * the hundred, it held turns past their leases in the SIGKILL load test).
 */
const CONCURRENCY = 2;
/**
 * How long a chatbot's recordings are collected before they are written, in one script, and how many
 * at most: under load a batch costs about one Redis command per question instead of seven (each group
 * is read and written once a batch), and the inbox is at most this much behind.
 */
const BATCH_MS = 50;
const BATCH_SIZE = 50;
/** How far back an escalation looks for the visitor's last question. */
const ESCALATION_LOOKBACK = 50;

/** A stored turn, as the inbox judges it. */
export interface TurnRecord {
  chatbotId: string;
  sessionId: string;
  question: string;
  /** When the visitor message was stored (the turn's `createdAt`). */
  askedAt: string;
  generation: Generation;
  /** Whether the stored reply is the chatbot's fallback message. */
  fallback: boolean;
}

/**
 * Why a stored turn belongs in the inbox, if it does: the chatbot answers only from its sources and
 * found none (`sources_only`, its reply the fallback message), the reply is the fallback message (an
 * empty answer, or a provider that failed in a chat), or the reply was written from passages below
 * the relevance floor.
 */
export function turnReason(generation: Generation, fallback: boolean): UnansweredReason | undefined {
  if (generation.kind === 'ungrounded') return 'sources_only';
  if (fallback) return 'fallback';
  if (generation.kind === 'reply' && !generation.grounded) return 'low_relevance';
  return undefined;
}

/** A question's embedding in the served space, with that space's grouping threshold. */
interface QuestionEmbedding {
  space: string;
  vector: Float32Array;
  threshold: number;
}

/**
 * Records the visitor questions a chatbot did not answer well into its inbox (UnansweredStore), from
 * any process: a turn's fallback, low-relevance or sources-only reply, a thumbs-down, an escalation.
 * Each `note…` call returns at once; the recording runs afterwards, off the visitor's turn, batched per
 * chatbot (BATCH_MS), and its failure is logged, never thrown. A question joins the open group with
 * the same normalized text, else the one whose representative's embedding is nearest (at or above the
 * space's threshold), else a new group; the store's script re-checks both, so gateways recording at
 * once agree.
 */
export class UnansweredRecorder {
  private readonly store: UnansweredStore;
  private readonly conversations: Pick<ConversationStore, 'recentMessages'>;
  private readonly logger: Logger;
  private readonly clock: Clock;
  /** Work under way: batches being recorded, escalations looking for their question. */
  private readonly pending = new Set<Promise<void>>();
  /** Per chatbot, the occurrences waiting for their batch, and the timer that will write them. */
  private readonly batches = new Map<string, { occurrences: UnansweredOccurrence[]; timer: Timer }>();
  /** Occurrences noted and not yet recorded, and escalations not yet looked up: what MAX_PENDING bounds. */
  private waiting = 0;
  private readonly limit = pLimit(CONCURRENCY);
  /**
   * The embedder of the space the gateways serve. A gateway sets its served retrieval's; the CLI's
   * default opens the recorded space's embedder when first needed.
   */
  embedder: () => Promise<QuestionEmbedder>;

  constructor(deps: {
    store: UnansweredStore;
    conversations: Pick<ConversationStore, 'recentMessages'>;
    logger: Logger;
    clock: Clock;
    embedder: () => Promise<QuestionEmbedder>;
  }) {
    this.store = deps.store;
    this.conversations = deps.conversations;
    this.logger = deps.logger;
    this.clock = deps.clock;
    this.embedder = deps.embedder;
  }

  /** A stored AI reply: recorded when `turnReason` names a reason. */
  noteTurn(turn: TurnRecord): void {
    const reason = turnReason(turn.generation, turn.fallback);
    const askedAt = parseTimestamp(turn.askedAt);
    if (!reason || askedAt === undefined) return;
    this.enqueue(turn.chatbotId, turn.sessionId, turn.question, askedAt, reason);
  }

  /** The visitor rated an AI reply down: the visitor message before it (stored at `askedAt`, micros). */
  noteThumbsDown(chatbotId: string, sessionId: string, question: string, askedAt: number): void {
    this.enqueue(chatbotId, sessionId, question, askedAt, 'thumbs_down');
  }

  /**
   * The conversation was escalated for the first time: the visitor's last question before it (a
   * message that only asks for a person, "talk to a human", is passed over for the one before).
   */
  noteEscalation(chatbotId: string, sessionId: string): void {
    if (!this.reserve(chatbotId)) return;
    // Looked up a few at a time, like the batches, and counted among what waits until then.
    const lookup = this.limit(async () => {
      const messages = await this.conversations.recentMessages(chatbotId, sessionId, ESCALATION_LOOKBACK);
      const question = messages.findLast((message) => message.role === 'user' && !asksForHuman(message.content));
      const askedAt = question && parseTimestamp(question.created_at);
      if (!question || askedAt === undefined) return;
      this.enqueue(chatbotId, sessionId, question.content, askedAt, 'escalated');
    }).finally(() => {
      this.waiting -= 1;
    });
    this.track(chatbotId, lookup);
  }

  /**
   * Writes every batch now and resolves once everything noted so far has been recorded (a CLI command
   * and a stopping gateway wait for it).
   */
  async settled(): Promise<void> {
    while (this.pending.size > 0 || this.batches.size > 0) {
      for (const chatbotId of [...this.batches.keys()]) this.write(chatbotId);
      await Promise.allSettled([...this.pending]);
    }
  }

  /**
   * Records one occurrence now: the visitor message at `askedAt` of the session went unanswered for
   * `reason`. Undefined for a message with no words, or one that only asks for a person.
   */
  async record(
    chatbotId: string,
    sessionId: string,
    text: string,
    askedAt: number,
    reason: UnansweredReason,
  ): Promise<RecordReply | undefined> {
    const occurrence = occurrenceOf(sessionId, text, askedAt, reason);
    if (!occurrence) return undefined;
    const [reply] = await this.recordAll(chatbotId, [occurrence]);
    return reply;
  }

  /**
   * The open group a question belongs to, if any: the group its visitor message went to, else the one
   * with its normalized text, else the nearest by embedding.
   */
  async findGroup(chatbotId: string, text: string, message?: { sessionId: string; askedAt: number }) {
    if (message) {
      const seen = await this.store.groupOfMessage(chatbotId, message.sessionId, message.askedAt);
      if (seen) return seen;
    }
    const question = clipQuestion(text);
    const same = await this.store.groupOfText(chatbotId, questionKey(question));
    if (same) return same;
    const [target] = await this.nearest(chatbotId, [await this.embed(chatbotId, question)]);
    return target!.group || undefined;
  }

  /**
   * Records a chatbot's occurrences in one script per attempt: those whose match went stale meanwhile
   * (`retry`) are matched again, and on the last attempt take whatever group they match.
   */
  private async recordAll(chatbotId: string, occurrences: UnansweredOccurrence[]): Promise<RecordReply[]> {
    const embeddings = await Promise.all(occurrences.map((occurrence) => this.embed(chatbotId, occurrence.question)));
    // As stored, once per vector: a question asked again is the same vector (QueryEmbedder's).
    const encoded = new Map<Float32Array, string>();
    const stored = embeddings.map((embedding) => {
      if (!embedding) return '';
      const { space, vector } = embedding;
      if (!encoded.has(vector)) encoded.set(vector, encodeVector(space, vector));
      return encoded.get(vector)!;
    });
    const replies: RecordReply[] = [];
    let left = occurrences.map((_, i) => i);
    for (let attempt = 1; left.length > 0; attempt++) {
      const force = attempt >= MAX_ATTEMPTS;
      const nearest = await this.nearest(
        chatbotId,
        left.map((i) => embeddings[i]),
      );
      const got = await this.store.record(
        chatbotId,
        left.map((i, j) => ({
          occurrence: occurrences[i]!,
          match: { target: nearest[j]!.group, version: nearest[j]!.version, vector: stored[i]!, force },
        })),
      );
      const again: number[] = [];
      got.forEach((reply, j) => {
        if (reply[0] === 'retry') again.push(left[j]!);
        else replies[left[j]!] = reply;
      });
      left = again;
    }
    return replies;
  }

  /**
   * Each embedding's nearest open group ('' when none is near enough) and the version of the groups'
   * embeddings it was found among ('' without an embedding), all against one reading of them.
   */
  private async nearest(
    chatbotId: string,
    embeddings: Array<QuestionEmbedding | undefined>,
  ): Promise<Array<{ group: string; version: string }>> {
    const read = new Map<string, Promise<UnansweredCandidates>>();
    return Promise.all(
      embeddings.map(async (embedding) => {
        if (!embedding) return { group: '', version: '' };
        const { space, vector, threshold } = embedding;
        let candidates = read.get(space);
        if (!candidates) read.set(space, (candidates = this.store.candidates(chatbotId, space)));
        const { version, vectors } = await candidates;
        return { group: nearestGroup(vector, vectors, threshold) ?? '', version };
      }),
    );
  }

  /** The question's embedding where its space has a grouping threshold; none when embedding fails. */
  private async embed(chatbotId: string, question: string): Promise<QuestionEmbedding | undefined> {
    try {
      const embedder = await this.embedder();
      const threshold = groupingThreshold(embedder.space);
      if (threshold === undefined) return undefined;
      const vector = await embedder.embed(chatbotId, question);
      return { space: embedder.space, vector, threshold };
    } catch (error) {
      this.logger.warn({ err: error, chatbot_id: chatbotId }, 'unanswered question not embedded: grouped by its text');
      return undefined;
    }
  }

  /** Adds an occurrence to its chatbot's batch, written BATCH_MS after the batch began or once full. */
  private enqueue(chatbotId: string, sessionId: string, text: string, askedAt: number, reason: UnansweredReason) {
    const occurrence = occurrenceOf(sessionId, text, askedAt, reason);
    if (!occurrence || !this.reserve(chatbotId)) return;
    let batch = this.batches.get(chatbotId);
    if (!batch) {
      batch = { occurrences: [], timer: this.clock.setTimeout(() => this.write(chatbotId), BATCH_MS) };
      this.batches.set(chatbotId, batch);
    }
    batch.occurrences.push(occurrence);
    if (batch.occurrences.length >= BATCH_SIZE) this.write(chatbotId);
  }

  /** Counts one more thing waiting, unless MAX_PENDING are: then it is dropped, and said so. */
  private reserve(chatbotId: string): boolean {
    if (this.waiting >= MAX_PENDING) {
      this.logger.warn({ chatbot_id: chatbotId }, 'unanswered question not recorded: too many recordings under way');
      return false;
    }
    this.waiting += 1;
    return true;
  }

  /** Starts writing a chatbot's batch (a few batches at a time). */
  private write(chatbotId: string): void {
    const batch = this.batches.get(chatbotId);
    if (!batch) return;
    this.batches.delete(chatbotId);
    this.clock.clearTimer(batch.timer);
    const { occurrences } = batch;
    const recorded = this.limit(() => this.recordAll(chatbotId, occurrences)).finally(() => {
      this.waiting -= occurrences.length;
    });
    this.track(chatbotId, recorded, occurrences.length);
  }

  /** Keeps `work` for settled(), and logs its failure. */
  private track(chatbotId: string, work: Promise<unknown>, questions?: number): void {
    const running: Promise<void> = work
      .then(() => undefined)
      .catch((error: unknown) => {
        this.logger.error({ err: error, chatbot_id: chatbotId, questions }, 'could not record an unanswered question');
      })
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }
}

/** An occurrence as recorded: undefined for a message with no words, or one that only asks for a person. */
function occurrenceOf(
  sessionId: string,
  text: string,
  askedAt: number,
  reason: UnansweredReason,
): UnansweredOccurrence | undefined {
  const question = clipQuestion(text);
  const key = questionKey(question);
  // Asking for a person is not a question the sources could answer.
  if (!key || asksForHuman(question)) return undefined;
  return { sessionId, question, key, reason, askedAt };
}
