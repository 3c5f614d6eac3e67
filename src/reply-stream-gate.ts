import type { Clock } from './clock.ts';

/**
 * How long after a takeover a conversation's streamed pieces are still dropped: pieces its turn
 * published after the takeover, before it heard of it and stopped (within a round trip or two).
 * The AI writes nothing while an agent holds a conversation, so later pieces cannot belong to it.
 */
export const TAKEOVER_DROP_MS = 60_000;
/** Streams remembered as ended (to drop their late pieces), and live streams remembered, at most. */
const REMEMBERED = 10_000;

const key = (chatbotId: string, sessionId: string): string => `${chatbotId}\n${sessionId}`;

/**
 * Which pieces of streamed replies the sockets held in this process may show. Every gateway sees
 * the signals of a conversation in the order they were published (one channel), so a takeover's
 * signal comes after every piece published before it, and each gateway decides alike: the stream
 * live at the takeover ends there, and nothing of it shows after, not even a piece published by a
 * turn that had not heard of the takeover yet.
 */
export class ReplyStreamGate {
  private readonly clock: Pick<Clock, 'nowMicros'>;
  /** The stream being shown per conversation. */
  private readonly live = new Map<string, string>();
  /** Conversations taken over lately, with when the takeover's drop window closes (µs). */
  private readonly held = new Map<string, number>();
  /** Streams that ended without their reply (cut, failed): their late pieces are dropped. */
  private readonly ended = new Set<string>();

  constructor(clock: Pick<Clock, 'nowMicros'>) {
    this.clock = clock;
  }

  /** A piece of a stream arrived: whether to show it. */
  piece(chatbotId: string, sessionId: string, streamId: string): boolean {
    if (this.ended.has(streamId)) return false;
    const at = key(chatbotId, sessionId);
    if (this.isHeld(at)) {
      this.end(streamId);
      return false;
    }
    this.live.delete(at);
    this.live.set(at, streamId);
    trim(this.live);
    return true;
  }

  /** A takeover (or release) of the conversation: the stream it cut, if one was being shown. */
  takenOver(chatbotId: string, sessionId: string, holder: string | null): string | undefined {
    const at = key(chatbotId, sessionId);
    if (holder === null) {
      this.held.delete(at);
      return undefined;
    }
    this.sweepHeld();
    // Deleted first, so the map stays in the order the windows close.
    this.held.delete(at);
    this.held.set(at, this.clock.nowMicros() + TAKEOVER_DROP_MS * 1000);
    const streamId = this.live.get(at);
    if (streamId === undefined) return undefined;
    this.live.delete(at);
    this.end(streamId);
    return streamId;
  }

  /** The turn says its stream ended without a reply: whether the sockets still need telling. */
  endedWithoutReply(chatbotId: string, sessionId: string, streamId: string): boolean {
    if (this.ended.has(streamId)) return false;
    const at = key(chatbotId, sessionId);
    if (this.live.get(at) === streamId) this.live.delete(at);
    this.end(streamId);
    return true;
  }

  /** The stream's reply was stored: it is no longer being written. */
  replied(chatbotId: string, sessionId: string, streamId: string): void {
    const at = key(chatbotId, sessionId);
    if (this.live.get(at) === streamId) this.live.delete(at);
  }

  private isHeld(at: string): boolean {
    const until = this.held.get(at);
    if (until === undefined) return false;
    if (until > this.clock.nowMicros()) return true;
    this.held.delete(at);
    return false;
  }

  private end(streamId: string): void {
    this.ended.add(streamId);
    trim(this.ended);
  }

  /** Takeovers whose window closed, forgotten (kept in the order they were made). */
  private sweepHeld(): void {
    const now = this.clock.nowMicros();
    for (const [at, until] of this.held) {
      if (until > now) break;
      this.held.delete(at);
    }
  }
}

/** Forgets the oldest entries beyond REMEMBERED (Maps and Sets keep insertion order). */
function trim(entries: Map<string, string> | Set<string>): void {
  for (const oldest of entries.keys()) {
    if (entries.size <= REMEMBERED) return;
    entries.delete(oldest);
  }
}
