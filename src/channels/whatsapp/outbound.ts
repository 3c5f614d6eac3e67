import type { WhatsAppSocket } from './socket.ts';

/** How many sent message ids are remembered, to tell our own messages from the owner's. */
const SENT_MEMORY = 1000;

/** Sends to WhatsApp chats through the chatbot's socket: text, and the typing presence. */
export class WhatsAppOutbound {
  private readonly socket: WhatsAppSocket;
  /** Ids of the messages this socket sent, oldest first. */
  private readonly sent = new Set<string>();

  constructor(socket: WhatsAppSocket) {
    this.socket = socket;
  }

  async sendText(jid: string, text: string): Promise<void> {
    const message = await this.socket.sendMessage(jid, { text });
    const id = message?.key.id;
    if (!id) return;
    this.sent.add(id);
    if (this.sent.size > SENT_MEMORY) this.sent.delete(this.sent.values().next().value!);
  }

  /** Whether this socket sent the message: its echo is not the owner writing from the phone. */
  sentByUs(messageId: string): boolean {
    return this.sent.has(messageId);
  }

  async typing(jid: string): Promise<void> {
    await this.socket.sendPresenceUpdate('composing', jid);
  }

  async doneTyping(jid: string): Promise<void> {
    await this.socket.sendPresenceUpdate('paused', jid);
  }
}
