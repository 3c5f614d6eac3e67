import type { TelegramConnector } from '../channels/telegram/connector.ts';
import type { WhatsAppLinker } from '../channels/whatsapp/linker.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';

/**
 * Deleting a chatbot, for the CLI and the dashboard alike: its messaging channels are disconnected
 * first (the WhatsApp device is logged out, the Telegram bot stops), because a deleted chatbot can no
 * longer be reached to unlink them; then the chatbot is soft-deleted.
 */
export class ChatbotDeletion {
  private readonly deps: { chatbots: ChatbotStore; whatsapp: WhatsAppLinker; telegram: TelegramConnector };

  constructor(deps: { chatbots: ChatbotStore; whatsapp: WhatsAppLinker; telegram: TelegramConnector }) {
    this.deps = deps;
  }

  async delete(chatbotId: string): Promise<void> {
    const chatbot = await this.deps.chatbots.get(chatbotId);
    await this.deps.whatsapp.disconnect(chatbot.id);
    await this.deps.telegram.disconnect(chatbot.id);
    await this.deps.chatbots.softDelete(chatbot.id);
  }
}
