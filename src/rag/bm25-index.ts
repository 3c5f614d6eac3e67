/**
 * An in-memory Okapi BM25 inverted index over tokenized documents, scored like Redis's BM25STD:
 *
 *   score(d, q) = Σ_{t ∈ q} idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))
 *   idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
 *
 * N is the number of documents, n(t) how many contain t, |d| a document's token count.
 *
 * A query walks only the posting lists of its own terms, document at a time, with MaxScore pruning
 * (Turtle & Flood): once k documents are known, terms whose score bounds add up to less than the
 * k-th score cannot bring in a new document by themselves, so they are only looked up (by galloping
 * search) for the documents the other terms propose. The result is exact; a query with a very common
 * term costs about as much as its rarer terms' posting lists.
 *
 * Removing a document leaves its postings as tombstones (its slot is never reused) until dead slots
 * outnumber live ones; then every posting list is compacted at once. Removal stays cheap and posting
 * lists never hold more than twice the live postings.
 */

/** A document id and its score, as search returns them (best first). */
export interface ScoredId {
  id: string;
  score: number;
}

/** BM25 parameters; the defaults are Redis's. */
export interface Bm25Options {
  k1?: number;
  b?: number;
}

/** The documents that contain one term, in slot order, as parallel arrays. */
interface Posting {
  slots: Int32Array;
  frequencies: Float32Array;
  /** Entries in use, tombstones included. */
  length: number;
  /** Live documents containing the term: n(t). */
  documentFrequency: number;
  /** Bounds over the entries (tombstones included, so still bounds after removals). */
  maxFrequency: number;
  minDocumentLength: number;
}

/** One query term's walk along its posting list. */
interface Cursor {
  posting: Posting;
  idf: number;
  /** No document gets more than this from the term. */
  bound: number;
  position: number;
}

/** Compaction waits until at least this many slots are dead, so small indexes never churn. */
const MIN_DEAD_SLOTS_TO_COMPACT = 1024;
/** Bounds are raised by this factor so that rounding in a sum can never prune a document wrongly. */
const BOUND_SLACK = 1 + 1e-9;

/** A BM25 index of one chatbot's chunks. Not thread-safe; all methods are synchronous. */
export class Bm25Index {
  readonly k1: number;
  readonly b: number;
  #termIds = new Map<string, number>();
  #postings: Posting[] = [];
  #slotOf = new Map<string, number>();
  #ids: Array<string | undefined> = [];
  #lengths = new Float32Array(64);
  #alive = new Uint8Array(64);
  /** Per slot, the term ids it contains (each once), to update n(t) on removal. */
  #slotTerms: Array<Int32Array | undefined> = [];
  #totalLength = 0;

  constructor(options: Bm25Options = {}) {
    const { k1 = 1.2, b = 0.75 } = options;
    if (!(k1 > 0) || !Number.isFinite(k1)) throw new RangeError(`k1 must be a finite number > 0, got ${k1}`);
    if (!(b >= 0 && b <= 1)) throw new RangeError(`b must be between 0 and 1, got ${b}`);
    this.k1 = k1;
    this.b = b;
  }

  /** How many documents are indexed. */
  get size(): number {
    return this.#slotOf.size;
  }

  /** True when a document with this id is indexed. */
  has(id: string): boolean {
    return this.#slotOf.has(id);
  }

  /** Indexes a document's tokens under its id, replacing any document with the same id. */
  add(id: string, tokens: readonly string[]): void {
    this.remove(id);
    const slot = this.#ids.length;
    this.#ensureSlotCapacity(slot + 1);
    const counts = new Map<number, number>();
    for (const token of tokens) {
      const termId = this.#termId(token);
      counts.set(termId, (counts.get(termId) ?? 0) + 1);
    }
    for (const [termId, frequency] of counts) {
      appendPosting(this.#postings[termId]!, slot, frequency, tokens.length);
    }
    this.#ids.push(id);
    this.#slotTerms.push(Int32Array.from(counts.keys()));
    this.#slotOf.set(id, slot);
    this.#lengths[slot] = tokens.length;
    this.#alive[slot] = 1;
    this.#totalLength += tokens.length;
  }

  /** Removes a document; false when there was none with this id. */
  remove(id: string): boolean {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return false;
    this.#slotOf.delete(id);
    this.#alive[slot] = 0;
    this.#ids[slot] = undefined;
    this.#totalLength -= this.#lengths[slot]!;
    for (const termId of this.#slotTerms[slot]!) this.#postings[termId]!.documentFrequency -= 1;
    this.#slotTerms[slot] = undefined;
    const dead = this.#ids.length - this.#slotOf.size;
    if (dead >= MIN_DEAD_SLOTS_TO_COMPACT && dead > this.#slotOf.size) this.#compact();
    return true;
  }

  /**
   * The k best documents for the query terms (repeated terms count once), best first; equal scores
   * are ordered by id. Documents that contain none of the terms are not returned.
   */
  search(queryTokens: readonly string[], k: number): ScoredId[] {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    const documents = this.#slotOf.size;
    if (documents === 0) return [];
    const averageLength = this.#totalLength / documents || 1;
    const cursors: Cursor[] = [];
    for (const token of new Set(queryTokens)) {
      const termId = this.#termIds.get(token);
      const posting = termId === undefined ? undefined : this.#postings[termId]!;
      if (posting === undefined || posting.documentFrequency === 0) continue;
      const n = posting.documentFrequency;
      const idf = Math.log(1 + (documents - n + 0.5) / (n + 0.5));
      const bound =
        this.#contribution(idf, posting.maxFrequency, posting.minDocumentLength, averageLength) * BOUND_SLACK;
      cursors.push({ posting, idf, bound, position: 0 });
    }
    cursors.sort((x, y) => x.bound - y.bound);
    return this.#maxScore(cursors, k, averageLength).sort((x, y) => (better(x, y) ? -1 : 1));
  }

  /**
   * Document-at-a-time MaxScore over cursors sorted by ascending bound. Cursors before
   * `firstEssential` are non-essential: together they cannot beat the k-th score. Returns the heap.
   */
  #maxScore(cursors: Cursor[], k: number, averageLength: number): ScoredId[] {
    const prefixBounds = new Float64Array(cursors.length);
    for (let i = 0, sum = 0; i < cursors.length; i++) prefixBounds[i] = sum += cursors[i]!.bound;
    const heap: ScoredId[] = [];
    // Each term's part of the current document's score, summed in cursor order so that equal
    // scores come out bit-identical whichever terms were essential at the time.
    const parts = new Float64Array(cursors.length);
    let threshold = 0;
    let firstEssential = 0;
    for (let slot = this.#nextCandidate(cursors, firstEssential); slot >= 0;) {
      parts.fill(0, 0, firstEssential);
      let partial = 0;
      for (let i = firstEssential; i < cursors.length; i++) {
        partial += parts[i] = this.#scoreAt(cursors[i]!, slot, averageLength);
      }
      for (let i = firstEssential - 1; i >= 0 && partial + prefixBounds[i]! >= threshold; i--) {
        partial += parts[i] = this.#seekScore(cursors[i]!, slot, averageLength);
      }
      let score = 0;
      for (const part of parts) score += part;
      // A hit object only for a document that may enter the heap: most candidates do not, and their
      // garbage made young-generation collections land inside searches (p99 at 100k chunks).
      if (heap.length < k) heapPush(heap, { id: this.#ids[slot]!, score });
      else if (score >= heap[0]!.score) {
        const hit = { id: this.#ids[slot]!, score };
        if (better(hit, heap[0]!)) heapReplaceTop(heap, hit);
      }
      if (heap.length === k) {
        threshold = heap[0]!.score;
        while (firstEssential < cursors.length && prefixBounds[firstEssential]! < threshold) firstEssential++;
      }
      slot = this.#nextCandidate(cursors, firstEssential);
    }
    return heap;
  }

  /** The smallest live slot under an essential cursor (skipping tombstones), or -1 when none is left. */
  #nextCandidate(cursors: Cursor[], firstEssential: number): number {
    let next = -1;
    for (let i = firstEssential; i < cursors.length; i++) {
      const cursor = cursors[i]!;
      const { slots, length } = cursor.posting;
      while (cursor.position < length && this.#alive[slots[cursor.position]!] === 0) cursor.position++;
      if (cursor.position < length && (next < 0 || slots[cursor.position]! < next)) next = slots[cursor.position]!;
    }
    return next;
  }

  /** An essential cursor's contribution to `slot` when it stands on it (and then steps past it). */
  #scoreAt(cursor: Cursor, slot: number, averageLength: number): number {
    const { slots, frequencies, length } = cursor.posting;
    if (cursor.position >= length || slots[cursor.position] !== slot) return 0;
    const frequency = frequencies[cursor.position++]!;
    return this.#contribution(cursor.idf, frequency, this.#lengths[slot]!, averageLength);
  }

  /** A non-essential cursor's contribution to `slot`, found by galloping forward to it. */
  #seekScore(cursor: Cursor, slot: number, averageLength: number): number {
    const { slots, length } = cursor.posting;
    let low = cursor.position;
    let step = 1;
    while (low + step < length && slots[low + step]! < slot) {
      low += step;
      step *= 2;
    }
    let high = Math.min(low + step, length);
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (slots[mid]! < slot) low = mid + 1;
      else high = mid;
    }
    cursor.position = low;
    return this.#scoreAt(cursor, slot, averageLength);
  }

  #contribution(idf: number, frequency: number, documentLength: number, averageLength: number): number {
    const { k1, b } = this;
    return (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * documentLength) / averageLength));
  }

  #termId(token: string): number {
    let termId = this.#termIds.get(token);
    if (termId === undefined) {
      termId = this.#postings.length;
      this.#termIds.set(token, termId);
      this.#postings.push(emptyPosting());
    }
    return termId;
  }

  #ensureSlotCapacity(slots: number): void {
    if (slots <= this.#alive.length) return;
    const capacity = Math.max(slots, this.#alive.length * 2);
    this.#lengths = grow(this.#lengths, new Float32Array(capacity));
    this.#alive = grow(this.#alive, new Uint8Array(capacity));
  }

  /** Renumbers live documents densely (keeping their order) and drops every tombstone. */
  #compact(): void {
    const renumber = new Int32Array(this.#ids.length).fill(-1);
    const ids: string[] = [];
    const slotTerms: Int32Array[] = [];
    const lengths = new Float32Array(Math.max(64, this.#slotOf.size * 2));
    for (let slot = 0; slot < this.#ids.length; slot++) {
      const id = this.#ids[slot];
      if (id === undefined) continue;
      renumber[slot] = ids.length;
      lengths[ids.length] = this.#lengths[slot]!;
      this.#slotOf.set(id, ids.length);
      ids.push(id);
      slotTerms.push(this.#slotTerms[slot]!);
    }
    for (const posting of this.#postings) compactPosting(posting, renumber, lengths);
    this.#ids = ids;
    this.#slotTerms = slotTerms;
    this.#lengths = lengths;
    this.#alive = new Uint8Array(lengths.length).fill(1, 0, ids.length);
  }
}

/** Higher score first; on equal scores, the smaller id first. */
function better(x: ScoredId, y: ScoredId): boolean {
  return x.score > y.score || (x.score === y.score && x.id < y.id);
}

/** Adds to a heap whose root is its worst hit. */
function heapPush(heap: ScoredId[], hit: ScoredId): void {
  heap.push(hit);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!better(heap[parent]!, heap[i]!)) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

/** Replaces the worst hit (the root) and sifts the new one down. */
function heapReplaceTop(heap: ScoredId[], hit: ScoredId): void {
  heap[0] = hit;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let worst = i;
    if (left < heap.length && better(heap[worst]!, heap[left]!)) worst = left;
    if (right < heap.length && better(heap[worst]!, heap[right]!)) worst = right;
    if (worst === i) return;
    [heap[worst], heap[i]] = [heap[i]!, heap[worst]!];
    i = worst;
  }
}

function emptyPosting(): Posting {
  return {
    slots: new Int32Array(4),
    frequencies: new Float32Array(4),
    length: 0,
    documentFrequency: 0,
    maxFrequency: 0,
    minDocumentLength: Infinity,
  };
}

function appendPosting(posting: Posting, slot: number, frequency: number, documentLength: number): void {
  if (posting.length === posting.slots.length) {
    posting.slots = grow(posting.slots, new Int32Array(posting.length * 2));
    posting.frequencies = grow(posting.frequencies, new Float32Array(posting.length * 2));
  }
  posting.slots[posting.length] = slot;
  posting.frequencies[posting.length] = frequency;
  posting.length += 1;
  posting.documentFrequency += 1;
  posting.maxFrequency = Math.max(posting.maxFrequency, frequency);
  posting.minDocumentLength = Math.min(posting.minDocumentLength, documentLength);
}

/** Keeps the live entries under their new slots, recomputes the bounds, and gives back spare room. */
function compactPosting(posting: Posting, renumber: Int32Array, lengths: Float32Array): void {
  let kept = 0;
  posting.maxFrequency = 0;
  posting.minDocumentLength = Infinity;
  for (let i = 0; i < posting.length; i++) {
    const slot = renumber[posting.slots[i]!]!;
    if (slot < 0) continue;
    const frequency = posting.frequencies[i]!;
    posting.slots[kept] = slot;
    posting.frequencies[kept] = frequency;
    posting.maxFrequency = Math.max(posting.maxFrequency, frequency);
    posting.minDocumentLength = Math.min(posting.minDocumentLength, lengths[slot]!);
    kept += 1;
  }
  posting.length = kept;
  if (kept * 4 < posting.slots.length && posting.slots.length > 4) {
    const capacity = Math.max(4, kept * 2);
    posting.slots = posting.slots.slice(0, capacity);
    posting.frequencies = posting.frequencies.slice(0, capacity);
  }
}

/** Copies `from` into the start of the larger `into` and returns `into`. */
function grow<T extends Int32Array | Float32Array | Uint8Array>(from: T, into: T): T {
  into.set(from);
  return into;
}
