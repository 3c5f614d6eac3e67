import type { ConversationErased } from '../contract/conversation.ts';
import { NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ErasureStore } from '../store/erasure-store.ts';

/**
 * A visitor's erasure request, for the CLI and the dashboard alike: the conversation of the session is
 * deleted with everything keyed by it, then the lead the session left, and the unanswered inbox's
 * groups stop naming the session. A session with neither a conversation nor a lead is not found. What
 * left Switchboard already (webhook deliveries, pending ones included) is outside it and stays.
 */
export class ConversationErasure {
  private readonly store: ErasureStore;
  private readonly logger: Logger;

  constructor(deps: { store: ErasureStore; logger: Logger }) {
    this.store = deps.store;
    this.logger = deps.logger;
  }

  async erase(chatbotId: string, sessionId: string): Promise<ConversationErased> {
    const conversation = await this.store.deleteConversation(chatbotId, sessionId);
    const leadId = await this.store.leadOfSession(chatbotId, sessionId);
    const lead = leadId !== undefined && (await this.store.deleteLead(chatbotId, leadId));
    const deleted = conversation.kind === 'deleted';
    if (!deleted && !lead) throw new NotFoundError('Conversation not found.');
    await this.store.unlinkUnanswered(chatbotId, [sessionId]);
    const messages = conversation.kind === 'deleted' ? conversation.messages : 0;
    // Counts only: what was deleted is gone from the logs too.
    this.logger.info({ chatbot_id: chatbotId, messages, lead }, 'conversation erased');
    return { chatbot_id: chatbotId, session_id: sessionId, deleted: { conversation: deleted, messages, lead } };
  }
}
