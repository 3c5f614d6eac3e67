import type { Generation } from '../conversations/turn-generation.ts';
import type { InboundMessage, TurnOutcome } from '../conversations/turn-pipeline.ts';

/** The messages a conversation actor understands. */
export type ConversationMessage =
  /** `answer` tells the requester (possibly early, on takeover); `done` fires once the turn has ended. */
  | { type: 'inbound'; inbound: InboundMessage; answer: (outcome: TurnOutcome) => void; done: () => void }
  /** A turn's retrieval and LLM call ended (successfully or not). */
  | { type: 'generated'; turn: number; generation: Generation }
  /** A renewal found the turn's lease gone (it lapsed, and another gateway may hold it now). */
  | { type: 'lease-lost'; turn: number }
  /** Takeover, release or escalation changed the record in Redis: reload it now. */
  | { type: 'refresh' }
  /** Another process held the conversation's lease: try the waiting message again. */
  | { type: 'retry' }
  /** Time to let go of a lease a turn cut off by an outage may have left (see `Stranded`). */
  | { type: 'release-stranded' };

export const inbound = (
  message: InboundMessage,
  answer: (outcome: TurnOutcome) => void,
  done: () => void,
): ConversationMessage => ({ type: 'inbound', inbound: message, answer, done });
export const generated = (turn: number, generation: Generation): ConversationMessage => ({
  type: 'generated',
  turn,
  generation,
});
export const leaseLost = (turn: number): ConversationMessage => ({ type: 'lease-lost', turn });
export const refresh: ConversationMessage = { type: 'refresh' };
export const retry: ConversationMessage = { type: 'retry' };
export const releaseStranded: ConversationMessage = { type: 'release-stranded' };
