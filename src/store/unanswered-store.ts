import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type {
  UnansweredGroup,
  UnansweredReason,
  UnansweredResolution,
  UnansweredStatus,
} from '../contract/unanswered.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { formatTimestamp } from '../timestamp.ts';
import { float32Bytes } from './chunk-store.ts';
import { RECORD, RESOLVE, type RecordOccurrenceArgs, type RecordReply } from './unanswered-scripts.ts';

/** How many groups a chatbot keeps, and how much of each. */
export interface UnansweredLimits {
  /** Open groups; a new group beyond them drops the least recently asked open one. */
  open: number;
  /** Resolved groups; beyond them the oldest resolved one is dropped. */
  resolved: number;
  /** Distinct questions shown per group. */
  examples: number;
  /** Distinct normalized texts indexed per group for exact matching (more still join by embedding). */
  keys: number;
}

export const UNANSWERED_LIMITS: UnansweredLimits = { open: 200, resolved: 200, examples: 5, keys: 20 };

/** One time a visitor question went unanswered. */
export interface UnansweredOccurrence {
  sessionId: string;
  /** The question as kept (`clipQuestion`) and its exact-text key (`questionKey`). */
  question: string;
  key: string;
  reason: UnansweredReason;
  /** When the visitor message was stored, in microseconds: with the session, it names the message. */
  askedAt: number;
}

/** How the recorder matched the question against the open groups. */
export interface UnansweredMatch {
  /** The nearest open group by embedding, '' when none is near enough. */
  target: string;
  /** The embeddings' version the match was made against, '' when the question has no embedding. */
  version: string;
  /** The question's embedding as stored (see `encodeVector`), '' when none. */
  vector: string;
  /** Create or join whatever changed meanwhile (the last attempt). */
  force: boolean;
}

/** The open groups' embeddings in one space, as of one version. */
export interface UnansweredCandidates {
  version: string;
  vectors: Map<string, Float32Array>;
}

/** Chatbots whose open groups' embeddings this process keeps between recordings. */
const CACHED_CHATBOTS = 100;

interface GroupRecord {
  id: string;
  question: string;
  key: string;
  count: number;
  first: string;
  last: string;
  session: string;
  status: UnansweredStatus;
  reasons: Partial<Record<UnansweredReason, number>>;
  examples: string[];
  keys: string[];
  resolution?: UnansweredResolution;
  resolved?: string;
  source?: string;
}

/**
 * The unanswered-questions inbox of each chatbot in Redis: groups of near-duplicate visitor questions
 * (see RECORD for how a question finds its group), open until the owner answers or dismisses them.
 * Every change is one script over the chatbot's keys, so any number of gateways record at once.
 */
export class UnansweredStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;
  readonly limits: UnansweredLimits;
  /** Per chatbot: the open groups' embeddings as of a version (they never change once written). */
  private readonly cache = new Map<string, { space: string; candidates: UnansweredCandidates }>();

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock, limits: UnansweredLimits = UNANSWERED_LIMITS) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.limits = limits;
  }

  /**
   * Records occurrences, each in the group its `match` leads to (or a new one), in one script: a reply
   * per occurrence, in order; `retry` to match that one again.
   */
  async record(
    chatbotId: string,
    entries: ReadonlyArray<{ occurrence: UnansweredOccurrence; match: UnansweredMatch }>,
  ): Promise<RecordReply[]> {
    const { keys, limits } = this;
    const scriptKeys: [string, string, string, string, string, ...string[]] = [
      keys.unansweredGroups(chatbotId),
      keys.unansweredOpen(chatbotId),
      keys.unansweredTexts(chatbotId),
      keys.unansweredVectors(chatbotId),
      keys.unansweredVersion(chatbotId),
    ];
    /** The index in KEYS (from 1, as Lua counts) of each session's hash of recorded messages. */
    const seenIndex = new Map<string, number>();
    const args: [number, number, number, ...Array<string | number>] = [limits.open, limits.examples, limits.keys];
    /** Per question key, the index in ARGV of the first embedding sent for it: the others refer to it. */
    const sentVector = new Map<string, number>();
    for (const { occurrence, match } of entries) {
      let seen = seenIndex.get(occurrence.sessionId);
      if (seen === undefined) {
        seen = scriptKeys.push(keys.conversationUnanswered(chatbotId, occurrence.sessionId));
        seenIndex.set(occurrence.sessionId, seen);
      }
      let vector = match.vector;
      const sent = sentVector.get(occurrence.key);
      if (vector !== '' && sent !== undefined) vector = `=${sent}`;
      else if (vector !== '') sentVector.set(occurrence.key, args.length + 10);
      const values: RecordOccurrenceArgs = [
        seen,
        occurrence.key,
        match.target,
        match.version,
        randomUUID(),
        occurrence.question,
        occurrence.reason,
        String(occurrence.askedAt),
        occurrence.sessionId,
        vector,
        match.force ? '1' : '0',
      ];
      args.push(...values);
    }
    return RECORD.run(this.redis, scriptKeys, args);
  }

  /**
   * The open groups' embeddings in `space` (others are left out: they cannot be compared), read again
   * only when the version moved since this process last read them, and then only those it does not
   * hold yet: a group's embedding never changes once written, so the ids tell what is new and what is
   * gone. (Reading every embedding on every change cost each unanswered turn some 200 × 2 KB.)
   */
  async candidates(chatbotId: string, space: string): Promise<UnansweredCandidates> {
    const versionKey = this.keys.unansweredVersion(chatbotId);
    const vectorsKey = this.keys.unansweredVectors(chatbotId);
    const cached = this.cache.get(chatbotId);
    const held = cached?.space === space ? cached.candidates : undefined;
    const version = (await this.redis.get(versionKey)) ?? '0';
    if (held?.version === version) {
      this.remember(chatbotId, cached!);
      return held;
    }
    const [read, ids] = (await this.redis.multi().get(versionKey).hKeys(vectorsKey).exec()) as unknown as [
      string | null,
      string[],
    ];
    const vectors = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const id of ids) {
      const known = held?.vectors.get(id);
      if (known) vectors.set(id, known);
      else missing.push(id);
    }
    const fetched = missing.length > 0 ? await this.redis.hmGet(vectorsKey, missing) : [];
    missing.forEach((id, i) => {
      const vector = fetched[i] ? decodeVector(fetched[i], space) : undefined;
      if (vector) vectors.set(id, vector);
    });
    const candidates = { version: read ?? '0', vectors };
    this.remember(chatbotId, { space, candidates });
    return candidates;
  }

  /** The group a visitor message went to, while that group is open. */
  async groupOfMessage(chatbotId: string, sessionId: string, askedAt: number): Promise<string | undefined> {
    const seen = await this.redis.hGet(this.keys.conversationUnanswered(chatbotId, sessionId), String(askedAt));
    const id = seen?.split(' ')[0];
    if (!id) return undefined;
    return (await this.find(chatbotId, id))?.status === 'open' ? id : undefined;
  }

  /** The open group a normalized text is indexed to. */
  async groupOfText(chatbotId: string, key: string): Promise<string | undefined> {
    const id = await this.redis.hGet(this.keys.unansweredTexts(chatbotId), key);
    return id ?? undefined;
  }

  /** The chatbot's groups of one status: open ones last asked first, resolved ones last resolved first. */
  async list(chatbotId: string, status: UnansweredStatus): Promise<UnansweredGroup[]> {
    const raw = await this.redis.hVals(this.keys.unansweredGroups(chatbotId));
    const records = raw.map((json) => JSON.parse(json) as GroupRecord).filter((group) => group.status === status);
    const order = (group: GroupRecord) => Number(status === 'open' ? group.last : group.resolved);
    return records.sort((a, b) => order(b) - order(a) || a.id.localeCompare(b.id)).map(groupView);
  }

  /** One group; `Question not found.` when the chatbot has none with that id. */
  async get(chatbotId: string, groupId: string): Promise<UnansweredGroup> {
    const group = await this.find(chatbotId, groupId);
    if (!group) throw new NotFoundError('Question not found.');
    return group;
  }

  /**
   * Resolves a group as answered by `sourceId`, or dismissed. Answering a group answered already is
   * a conflict; dismissing a resolved group leaves it as it is.
   */
  async resolve(
    chatbotId: string,
    groupId: string,
    resolution: UnansweredResolution,
    sourceId = '',
  ): Promise<UnansweredGroup> {
    const reply = await RESOLVE.run(
      this.redis,
      [
        this.keys.unansweredGroups(chatbotId),
        this.keys.unansweredOpen(chatbotId),
        this.keys.unansweredResolved(chatbotId),
        this.keys.unansweredTexts(chatbotId),
        this.keys.unansweredVectors(chatbotId),
        this.keys.unansweredVersion(chatbotId),
      ],
      [groupId, resolution, sourceId, String(this.clock.nowMicros()), this.limits.resolved],
    );
    if (reply[0] === 'missing') throw new NotFoundError('Question not found.');
    if (reply[0] === 'answered') throw new ConflictError(ANSWERED_ALREADY);
    return groupView(JSON.parse(reply[1]) as GroupRecord);
  }

  private async find(chatbotId: string, groupId: string): Promise<UnansweredGroup | undefined> {
    const raw = await this.redis.hGet(this.keys.unansweredGroups(chatbotId), groupId);
    return raw ? groupView(JSON.parse(raw) as GroupRecord) : undefined;
  }

  private remember(chatbotId: string, entry: { space: string; candidates: UnansweredCandidates }): void {
    // Most recently used last: the first key is the one to drop.
    this.cache.delete(chatbotId);
    this.cache.set(chatbotId, entry);
    if (this.cache.size > CACHED_CHATBOTS) this.cache.delete(this.cache.keys().next().value!);
  }
}

/** The conflict of answering a question answered already. */
export const ANSWERED_ALREADY = 'This question is answered already: change its source instead.';

/** An embedding as the inbox stores it: its space, a space, and its little-endian float32 bytes in base64. */
export function encodeVector(space: string, vector: Float32Array): string {
  return `${space} ${float32Bytes(vector).toString('base64')}`;
}

/** A stored embedding of `space`; undefined for one of another space. */
export function decodeVector(value: string, space: string): Float32Array | undefined {
  const gap = value.indexOf(' ');
  if (gap < 0 || value.slice(0, gap) !== space) return undefined;
  const bytes = Buffer.from(value.slice(gap + 1), 'base64');
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

function groupView(record: GroupRecord): UnansweredGroup {
  const group: UnansweredGroup = {
    id: record.id,
    question: record.question,
    count: record.count,
    first_seen_at: formatTimestamp(Number(record.first)),
    last_seen_at: formatTimestamp(Number(record.last)),
    reasons: record.reasons,
    examples: record.examples,
    session_id: record.session,
    status: record.status,
  };
  if (record.resolution) group.resolution = record.resolution;
  if (record.resolved) group.resolved_at = formatTimestamp(Number(record.resolved));
  if (record.source) group.source_id = record.source;
  return group;
}
