import type { TelegramConnector } from '../channels/telegram/connector.ts';
import type { WhatsAppLinker } from '../channels/whatsapp/linker.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { SourceStore } from '../store/source-store.ts';

interface Deps {
  chatbots: ChatbotStore;
  sources: SourceStore;
  ingestion: IngestionQueue;
  whatsapp: WhatsAppLinker;
  whatsappCloud: { disconnect(chatbotId: string): Promise<boolean> };
  telegram: TelegramConnector;
}

/**
 * Deleting a chatbot, for the CLI and the dashboard alike: its messaging channels are disconnected
 * first (the WhatsApp device is logged out or the Cloud API number forgotten, the Telegram bot stops), because a deleted chatbot can no
 * longer be reached to unlink them; its sources' scheduled syncs are cancelled (nobody can ask it
 * anything any more); then the chatbot is soft-deleted.
 */
export class ChatbotDeletion {
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  async delete(chatbotId: string): Promise<void> {
    const chatbot = await this.deps.chatbots.get(chatbotId);
    await this.deps.whatsapp.disconnect(chatbot.id);
    await this.deps.whatsappCloud.disconnect(chatbot.id);
    await this.deps.telegram.disconnect(chatbot.id);
    for (const source of await this.deps.sources.listForChatbot(chatbot.id)) {
      await this.deps.ingestion.cancelSync(chatbot.id, source.id);
    }
    await this.deps.chatbots.softDelete(chatbot.id);
  }
}
