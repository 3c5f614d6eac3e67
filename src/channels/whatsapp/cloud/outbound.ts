import { splitText } from '../../text-split.ts';
import { CLOUD_TEXT_LIMIT } from './config.ts';
import type { GraphApi } from './graph-api.ts';

/** What the Cloud API answers a sent message with. */
interface SendResponse {
  messages?: Array<{ id?: string }>;
}

/** The number a chatbot answers from, and the token it sends with. */
export interface CloudSender {
  phoneNumberId: string;
  token: string;
}

/**
 * Sends to one WhatsApp number's chats through the Cloud API's messages endpoint
 * (`POST /{version}/{phone-number-id}/messages`): text in as many messages as WhatsApp's limit needs,
 * and the read receipt with or without the typing indicator (the Cloud API shows typing only as part
 * of marking the visitor's message read).
 */
export class CloudOutbound {
  private readonly graph: GraphApi;
  private readonly sender: CloudSender;

  constructor(graph: GraphApi, sender: CloudSender) {
    this.graph = graph;
    this.sender = sender;
  }

  /**
   * Plain text (no link preview), split at paragraph, line or word boundaries; `sent` is called with
   * each part's message id (`wamid.…`) as Meta accepts it. A part that fails stops the rest.
   */
  async sendText(to: string, text: string, sent: (wamid: string) => Promise<void>): Promise<void> {
    for (const body of splitText(text, CLOUD_TEXT_LIMIT)) {
      const answer = await this.graph.post<SendResponse>(this.path(), this.sender.token, {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        type: 'text',
        text: { preview_url: false, body },
      });
      const wamid = answer.messages?.[0]?.id;
      if (wamid) await sent(wamid);
    }
  }

  /**
   * Marks the visitor's message (and those before it) read: blue ticks; with `typing`, the typing
   * indicator too, until the reply or for 25 seconds.
   */
  async markRead(messageId: string, typing: boolean): Promise<void> {
    await this.graph.post(this.path(), this.sender.token, {
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: messageId,
      ...(typing ? { typing_indicator: { type: 'text' } } : {}),
    });
  }

  private path(): string {
    return `/${this.sender.phoneNumberId}/messages`;
  }
}
