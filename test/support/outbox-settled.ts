import type { Services } from '../../src/services.ts';

/**
 * True once every event of the chatbot is relayed to the webhook outbox and every delivery has
 * finished: nothing more reaches a receiver without a new action, so what it has is final. An event's
 * entry is acknowledged only once its deliveries are written, so the entries are read first: whatever
 * they made is counted by the due queues read after (the other order could miss a delivery written in
 * between). A delivery being sent, or with a retry still to come, stays in its due queue until done.
 */
export async function outboxSettled(
  services: Pick<Services, 'relay' | 'deliveries'>,
  chatbotId: string,
): Promise<boolean> {
  return !(await services.relay.store.hasEntries(chatbotId)) && (await services.deliveries.pendingCount()) === 0;
}
