import type { Clock, Timer } from '../clock.ts';
import { eventKey, eventsOf, UnreadableEntryError, type StoredPendingEntry } from './pending-event.ts';
import type { EventName } from '../contract/webhook.ts';
import type { EventSink } from './webhook-event.ts';
import type { Logger } from '../logger.ts';
import type { PendingEventStore } from '../store/pending-event-store.ts';

/** Chatbots one sweep looks at, and entries it takes per chatbot at a time. */
const SWEEP_CHATBOTS = 100;
const SWEEP_ENTRIES = 50;
/** Entries recorded before a new one that are looked at for its conversation's (see deliverNew). */
const EARLIER_ENTRIES = 64;

/**
 * The transactional outbox's relay: what happened (a message, an escalation, a lead) is written to
 * Redis together with a pending entry of its events; the relay writes the entry's webhook deliveries
 * and then acknowledges it. Every event is emitted under a key made from the entry, so writing an
 * entry's deliveries twice (a sweep racing a slow process) yields the same deliveries once. Entries a
 * dead process left behind are taken over by the next turn of their chatbot or by `sweep`.
 */
export class EventRelay {
  readonly store: PendingEventStore;
  private readonly sink: EventSink;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private timer: Timer | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(store: PendingEventStore, sink: EventSink, logger: Logger, clock: Clock) {
    this.store = store;
    this.sink = sink;
    this.logger = logger;
    this.clock = clock;
  }

  /** Sweeps every half grace period (one sweep at a time) until stopped. */
  start(): void {
    this.timer = this.clock.setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    }, this.store.graceMs / 2);
  }

  async stop(): Promise<void> {
    this.clock.clearTimer(this.timer);
    await this.sweeping;
  }

  /**
   * Whether any of `events` would be delivered for the chatbot now: when not, a turn records no
   * pending entry for them (a webhook created meanwhile hears from the next message on).
   */
  listens(chatbotId: string, events: readonly EventName[]): Promise<boolean> {
    return this.sink.listens?.(chatbotId, events) ?? Promise.resolve(true);
  }

  /** Registers the chatbot with the sweeper's index; call it before writing an entry. */
  register(chatbotId: string): Promise<void> {
    return this.store.register(chatbotId);
  }

  /**
   * Writes the deliveries of an entry this process just recorded, after those of the conversation's
   * entries recorded before it that are still pending: the outbox sends one conversation's deliveries
   * in the order they are written, and the process that recorded an earlier change may be slower to
   * write it (a message stored on one gateway, then a takeover through another). Writing another
   * process's entry is safe: its deliveries have the same ids whoever writes them. Never throws, as
   * `deliver`; resolves with how many entries were acknowledged.
   */
  async deliverNew(chatbotId: string, entry: StoredPendingEntry): Promise<number> {
    let earlier: StoredPendingEntry[] = [];
    const conversationId = conversationOf(entry.json);
    if (conversationId !== undefined) {
      try {
        earlier = await this.store.pendingBefore(chatbotId, entry.id, conversationId, EARLIER_ENTRIES);
      } catch (error) {
        this.logger.error({ err: error, chatbot_id: chatbotId }, 'webhook deliveries not written; left pending');
        return 0;
      }
    }
    return this.deliver(chatbotId, [...earlier, entry]);
  }

  /**
   * Writes the deliveries of the entries' events, in order, and acknowledges each entry once its
   * deliveries are written. Never throws: an entry whose deliveries could not be written stays pending
   * (another process or a later sweep writes them, under the same delivery ids), and an entry this
   * version cannot read is logged and dropped. Resolves with how many entries were acknowledged.
   */
  async deliver(chatbotId: string, entries: StoredPendingEntry[]): Promise<number> {
    const done: string[] = [];
    for (const { id, json } of entries) {
      try {
        const events = eventsOf(chatbotId, json);
        for (const [index, event] of events.entries()) await this.sink.emit(event, eventKey(id, index));
        done.push(id);
      } catch (error) {
        if (!(error instanceof UnreadableEntryError)) {
          this.logger.error({ err: error, chatbot_id: chatbotId }, 'webhook deliveries not written; left pending');
          break;
        }
        this.logger.error(
          { err: error, chatbot_id: chatbotId, entry: json.slice(0, 200) },
          'dropped an unreadable event entry',
        );
        done.push(id);
      }
    }
    try {
      await this.store.ack(chatbotId, done);
    } catch (error) {
      this.logger.warn(
        { err: error, chatbot_id: chatbotId },
        'pending events not acknowledged; they will be written again',
      );
    }
    return done.length;
  }

  /**
   * Writes the deliveries of entries overdue for a grace period, for chatbots whose last event was
   * recorded at least that long ago (a busy chatbot's turns take over its overdue entries themselves),
   * and forgets chatbots with nothing pending. Returns how many entries it relayed.
   */
  async sweep(): Promise<number> {
    let relayed = 0;
    let quiet: string[];
    try {
      quiet = await this.store.quietChatbots(SWEEP_CHATBOTS);
    } catch (error) {
      this.logger.warn({ err: error }, 'pending events sweep');
      return 0;
    }
    for (const chatbotId of quiet) {
      try {
        for (;;) {
          const overdue = await this.store.claimOverdue(chatbotId, SWEEP_ENTRIES);
          if (overdue.length === 0) break;
          const delivered = await this.deliver(chatbotId, overdue);
          relayed += delivered;
          if (delivered < overdue.length) break;
        }
        if (!(await this.store.hasEntries(chatbotId))) await this.store.forgetIfQuiet(chatbotId);
      } catch (error) {
        this.logger.error({ err: error, chatbot_id: chatbotId }, 'pending events not relayed');
      }
    }
    if (relayed > 0) this.logger.warn({ entries: relayed }, 'relayed events a process left pending');
    return relayed;
  }
}

/** The conversation an entry's JSON names, if any (a lead's names none). */
function conversationOf(json: string): string | undefined {
  try {
    const id = (JSON.parse(json) as { conversation_id?: unknown }).conversation_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined; // unreadable: `deliver` logs and drops it
  }
}
