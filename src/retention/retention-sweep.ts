import type { RetentionSettings } from '../contract/chatbot-settings.ts';
import type { ErasureStore } from '../store/erasure-store.ts';

/** Microseconds in a day. */
export const DAY_MICROS = 24 * 60 * 60 * 1_000_000;

/** What one sweep of a chatbot deleted. */
export interface SweepCounts {
  conversations: number;
  messages: number;
  leads: number;
}

/** Why a sweep stopped before the end: its claim lost the chatbot's lease (another process may sweep it). */
export class RetentionLeaseLostError extends Error {
  constructor() {
    super('the retention lease was lost');
    this.name = 'RetentionLeaseLostError';
  }
}

/**
 * One sweep of one chatbot's retention: the conversations inactive for longer than
 * `conversations_days` and the leads captured longer than `leads_days` ago (as of `nowMicros`) are
 * deleted, `batch` at a time, and `between()` is awaited after each batch (the worker renews its
 * lease there, and throws to stop when it lost it). Each deletion re-checks its age in Redis, so a
 * conversation active meanwhile is kept. Resolves with what was deleted.
 */
export async function sweepChatbot(
  store: ErasureStore,
  chatbotId: string,
  retention: RetentionSettings,
  options: { nowMicros: number; batch: number; between: () => Promise<void> },
): Promise<SweepCounts> {
  const counts: SweepCounts = { conversations: 0, messages: 0, leads: 0 };
  const { nowMicros, batch, between } = options;
  if (retention.conversations_days !== null) {
    const cutoff = nowMicros - retention.conversations_days * DAY_MICROS;
    // Kept ones stay in the index at or before the cutoff only by a race (their next write moves them):
    // they are stepped over, so the sweep never reads the same batch for ever.
    let kept = 0;
    for (;;) {
      const sessions = await store.inactiveSessions(chatbotId, cutoff, batch, kept);
      if (sessions.length === 0) break;
      const deleted: string[] = [];
      for (const sessionId of sessions) {
        const outcome = await store.deleteConversation(chatbotId, sessionId, cutoff);
        if (outcome.kind === 'active') kept += 1;
        if (outcome.kind !== 'deleted') continue;
        deleted.push(sessionId);
        if (outcome.existed) counts.conversations += 1;
        counts.messages += outcome.messages;
      }
      await store.unlinkUnanswered(chatbotId, deleted);
      await between();
    }
  }
  if (retention.leads_days !== null) {
    const cutoff = nowMicros - retention.leads_days * DAY_MICROS;
    for (;;) {
      const leads = await store.leadsBefore(chatbotId, cutoff, batch);
      if (leads.length === 0) break;
      let deleted = 0;
      for (const leadId of leads) if (await store.deleteLead(chatbotId, leadId, cutoff)) deleted += 1;
      counts.leads += deleted;
      await between();
      // A listed lead is always deleted; should one not be, the sweep stops rather than read it again.
      if (deleted === 0) break;
    }
  }
  return counts;
}
