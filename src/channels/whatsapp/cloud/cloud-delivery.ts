import type { Clock } from '../../../clock.ts';
import { ConflictError, NotFoundError } from '../../../errors.ts';
import type { Logger } from '../../../logger.ts';
import { chatText, type VisitorPush } from '../../channel-port.ts';
import type { CloudConnection, WhatsAppCloudStore } from './cloud-store.ts';
import { cloudRecipient, SERVICE_WINDOW_MS, WINDOW_CLOSED } from './config.ts';
import type { GraphApi } from './graph-api.ts';
import { GraphApiError } from './graph-errors.ts';
import { CloudOutbound } from './outbound.ts';

/** When the chat's visitor last wrote, and that message's id. */
export interface LastInbound {
  atMs: number;
  messageId: string;
}

/**
 * Hands pushes to Cloud API chats from any process (the Graph API needs no connection of ours):
 * replies and agents' messages as text, their statuses recorded on the stored message; notices and
 * hand-off lines as text while the chat's 24-hour window is open; typing as the read receipt with the
 * typing indicator, on the visitor's last message. An agent's reply outside the window is refused
 * before it is stored ({@link assertCanReply}).
 */
export class CloudDelivery {
  private readonly store: WhatsAppCloudStore;
  private readonly graph: GraphApi;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(deps: { store: WhatsAppCloudStore; graph: GraphApi; clock: Clock; logger: Logger }) {
    this.store = deps.store;
    this.graph = deps.graph;
    this.clock = deps.clock;
    this.logger = deps.logger;
  }

  /** Whether the chatbot's WhatsApp goes through the Cloud API. */
  serves(chatbotId: string): Promise<boolean> {
    return this.store.serves(chatbotId);
  }

  /** A push for a `wa_` session of a chatbot on the Cloud API, with its connection read from Redis. */
  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    // Nothing to show: no secret opened.
    if (push.type !== 'typing' && chatText(push) === undefined) return;
    const connection = await this.store.find(chatbotId);
    if (!connection) throw new NotFoundError('WhatsApp is not connected for this chatbot.');
    await this.toChat(connection, sessionId, push, await this.store.lastInbound(chatbotId, sessionId));
  }

  /** Refuses (ConflictError) a message to a chat whose visitor has not written in the last 24 hours. */
  async assertCanReply(chatbotId: string, sessionId: string): Promise<void> {
    if (!this.windowOpen(await this.store.lastInbound(chatbotId, sessionId))) throw new ConflictError(WINDOW_CLOSED);
  }

  /** A push for one chat of a known connection; `last` is the visitor's last message, if any. */
  async toChat(connection: CloudConnection, sessionId: string, push: VisitorPush, last?: LastInbound): Promise<void> {
    const to = cloudRecipient(sessionId);
    if (to === undefined) throw new NotFoundError('Conversation not found.');
    const outbound = new CloudOutbound(this.graph, connection);
    if (push.type === 'typing') {
      if (last && this.windowOpen(last)) await outbound.markRead(last.messageId, true);
      return;
    }
    const text = chatText(push);
    if (text === undefined) return;
    if (push.type === 'message')
      return await this.sendReply(outbound, connection, sessionId, to, text, push.created_at);
    // A hand-off line or a notice outside the window would only be refused (131047).
    if (!this.windowOpen(last)) {
      this.logger.debug({ chatbot_id: connection.chatbotId }, 'whatsapp notice not sent: the 24-hour window is closed');
      return;
    }
    await outbound.sendText(to, text, async () => {});
  }

  /** Marks the visitor's message read (no typing): a message the chatbot will not answer in words. */
  async markRead(connection: CloudConnection, messageId: string): Promise<void> {
    await new CloudOutbound(this.graph, connection).markRead(messageId, false);
  }

  /**
   * A stored reply: each part's message id remembered for its status callbacks, `accepted` recorded;
   * a part Meta refuses records `failed` with what the error means, and rejects.
   */
  private async sendReply(
    outbound: CloudOutbound,
    connection: CloudConnection,
    sessionId: string,
    to: string,
    text: string,
    createdAt: string,
  ): Promise<void> {
    const { chatbotId } = connection;
    const at = () => this.clock.nowMicros();
    try {
      await outbound.sendText(to, text, async (wamid) => {
        await this.store.rememberSent(chatbotId, wamid, sessionId, createdAt);
        await this.store.recordDelivery(chatbotId, sessionId, createdAt, { status: 'accepted', at: at() });
      });
    } catch (error) {
      if (error instanceof GraphApiError) {
        const failed = { status: 'failed' as const, at: at(), error: error.detail };
        const code = error.code === undefined ? {} : { error_code: error.code };
        await this.store.recordDelivery(chatbotId, sessionId, createdAt, { ...failed, ...code });
      }
      throw error;
    }
  }

  private windowOpen(last: LastInbound | undefined): boolean {
    return last !== undefined && this.clock.nowMicros() / 1000 - last.atMs < SERVICE_WINDOW_MS;
  }
}
