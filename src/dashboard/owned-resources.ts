import { checkSessionId } from '../conversations/session.ts';
import { NotFoundError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Source } from '../sources/source.ts';
import type { Webhook } from '../webhooks/webhook.ts';
import { isUuid } from '../uuid.ts';

/** The stores an ownership check reads. */
type OwnershipDeps = Pick<Services, 'chatbots' | 'sources' | 'webhooks' | 'deliveries' | 'agents'>;

/**
 * Resolves an id from a dashboard request to the signed-in owner's resource. Another owner's id, an
 * unknown or deleted one and a malformed one are all "not found" with the public API's texts, so a
 * response never tells whether someone else's resource exists.
 */
export class OwnedResources {
  private readonly deps: OwnershipDeps;

  constructor(deps: OwnershipDeps) {
    this.deps = deps;
  }

  chatbot(userId: string, id: unknown): Promise<Chatbot> {
    return this.deps.chatbots.getOwned(userId, uuidOr(id, 'Chatbot not found.'));
  }

  async source(userId: string, id: unknown): Promise<Source> {
    const source = await this.deps.sources.get(uuidOr(id, 'Source not found.'));
    await this.owns(userId, source.chatbot_id, 'Source not found.');
    return source;
  }

  async webhook(userId: string, id: unknown): Promise<Webhook> {
    const webhook = await this.deps.webhooks.get(uuidOr(id, 'Webhook not found.'));
    await this.owns(userId, webhook.chatbot_id, 'Webhook not found.');
    return webhook;
  }

  /** A delivery of one of the owner's webhooks, by its id. */
  async delivery(userId: string, id: unknown): Promise<string> {
    const deliveryId = uuidOr(id, 'Delivery not found.');
    const chatbotId = await this.deps.deliveries.chatbotOf(deliveryId);
    await this.owns(userId, chatbotId, 'Delivery not found.');
    return deliveryId;
  }

  /** An API key id; the key store itself looks only among the owner's keys. */
  apiKeyId(id: unknown): string {
    return uuidOr(id, 'API key not found.');
  }

  /** An agent id of the owner's. */
  async agentId(userId: string, id: unknown): Promise<string> {
    const agentId = uuidOr(id, 'Agent not found.');
    if ((await this.deps.agents.owner(agentId)) !== userId) throw new NotFoundError('Agent not found.');
    return agentId;
  }

  /** A session id of one of the owner's chatbots; a malformed one is a conversation not found. */
  sessionId(value: unknown): string {
    try {
      return checkSessionId(value);
    } catch {
      throw new NotFoundError('Conversation not found.');
    }
  }

  private async owns(userId: string, chatbotId: string | undefined, detail: string): Promise<void> {
    try {
      if (chatbotId === undefined) throw new NotFoundError(detail);
      await this.deps.chatbots.getOwned(userId, chatbotId);
    } catch (error) {
      if (error instanceof NotFoundError) throw new NotFoundError(detail);
      throw error;
    }
  }
}

function uuidOr(id: unknown, detail: string): string {
  if (typeof id !== 'string' || !isUuid(id)) throw new NotFoundError(detail);
  return id.toLowerCase();
}
