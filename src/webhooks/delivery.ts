import type { DeliveryAttempt } from '../contract/webhook.ts';

// A webhook delivery: what the outbox queues, what the dispatcher claims and attempts, and what an
// attempt's result means. Its store persists these; the dispatcher decides the verdicts.

/** A delivery to queue: one event's body for one webhook. */
export interface NewDelivery {
  /** The delivery's id; an id that exists already is not written again. */
  id: string;
  webhookId: string;
  chatbotId: string;
  event: string;
  body: string;
  maxAttempts: number;
  orderKey: string;
}

/** A delivery claimed for one attempt. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  chatbotId: string;
  event: string;
  body: string;
  attempt: number;
  token: string;
  /** Ordering key: deliveries of one conversation to one webhook go out one after another. */
  orderKey: string;
  /** The outbox shard (hash tag) it was claimed from. */
  shard: string;
}

/** One attempt as recorded, its time in microseconds (the log shows it as a timestamp). */
export type AttemptRecord = Omit<DeliveryAttempt, 'at'> & { atMicros: number };

/** What an attempt's result means for the delivery. */
export type AttemptVerdict = { kind: 'delivered' } | { kind: 'retry'; atMicros: number } | { kind: 'failed' };

/**
 * What became of a delivery once its attempt was recorded: a retry past the last attempt is
 * `failed`; `stale` when its claim was lost meanwhile (another process holds it now).
 */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'stale';
