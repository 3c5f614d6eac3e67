import { EventEmitter } from 'node:events';
import type { AuthenticationState, WAMessage } from '@whiskeysockets/baileys';
import type {
  WhatsAppSocket,
  WhatsAppSocketEvents,
  WhatsAppSocketFactory,
} from '../../src/channels/whatsapp/socket.ts';

/** Baileys closes a connection with a Boom error; the channel reads `output.statusCode` from it. */
function disconnectError(statusCode: number, message: string): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

/**
 * A WhatsApp socket as the channel sees one: an event emitter (`ev`) the test drives the way Baileys
 * would, and every send recorded. Sending emits our own message back as an `append` upsert, as
 * Baileys does.
 */
export class FakeWhatsAppSocket implements WhatsAppSocket {
  readonly emitter = new EventEmitter();
  readonly ev = {
    on: <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) => {
      this.emitter.on(event, listener);
    },
  };
  readonly auth: AuthenticationState;
  readonly sent: Array<{ jid: string; text: string; id: string }> = [];
  readonly presence: Array<{ type: string; jid: string }> = [];
  readonly pairingRequests: string[] = [];
  ended = false;
  loggedOut = false;
  private nextId = 0;

  constructor(auth: AuthenticationState) {
    this.auth = auth;
  }

  async sendMessage(jid: string, content: { text: string }) {
    const id = `OUT${(this.nextId += 1)}`;
    this.sent.push({ jid, text: content.text, id });
    const key = { id, remoteJid: jid, fromMe: true };
    this.emit('messages.upsert', { type: 'append', messages: [{ key, message: { conversation: content.text } }] });
    return { key };
  }

  async sendPresenceUpdate(type: 'composing' | 'paused', jid: string): Promise<void> {
    this.presence.push({ type, jid });
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.pairingRequests.push(phoneNumber);
    return 'ABCD2345';
  }

  async logout(): Promise<void> {
    this.loggedOut = true;
    this.close(401, 'Intentional Logout');
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: disconnectError(428, 'Connection Closed'), date: new Date() },
    });
  }

  // What WhatsApp does, driven by the test:

  showQr(qr: string): void {
    this.emit('connection.update', { qr });
  }

  /** The phone linked the device (or a linked device reconnected): creds saved, connection open. */
  open(meId: string): void {
    this.auth.creds.me = { id: meId, name: 'Owner' };
    this.auth.creds.registered = true;
    this.emit('creds.update', { me: this.auth.creds.me });
    this.emit('connection.update', { connection: 'open' });
  }

  /** The connection closed with a disconnect reason (401 logged out, 515 restart required, …). */
  close(statusCode: number, message = 'closed'): void {
    this.ended = true;
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: disconnectError(statusCode, message), date: new Date() },
    });
  }

  /** Live messages arrive (`notify`), or other upserts (`append`: history, our own sends). */
  receive(messages: Array<Partial<WAMessage>>, type: 'notify' | 'append' = 'notify'): void {
    this.emit('messages.upsert', { type, messages: messages as WAMessage[] });
  }

  private emit(event: keyof WhatsAppSocketEvents, arg: unknown): void {
    this.emitter.emit(event, arg);
  }
}

/** Makes fake sockets for the channel and keeps every one it made, newest last. */
export class FakeWhatsApp {
  readonly sockets: FakeWhatsAppSocket[] = [];
  readonly factory: WhatsAppSocketFactory = ({ auth }) => {
    const socket = new FakeWhatsAppSocket(auth);
    this.sockets.push(socket);
    return socket;
  };

  /** The socket made after the first `after` sockets, once the channel has made it. */
  async socket(after = 0, timeoutMs = 10_000): Promise<FakeWhatsAppSocket> {
    const deadline = Date.now() + timeoutMs;
    while (this.sockets.length <= after) {
      if (Date.now() > deadline) throw new Error(`no WhatsApp socket #${after + 1} was made`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.sockets[after]!;
  }
}

let messageCounter = 0;

/** A live text message from a contact (or, `fromMe`, from the owner's phone). */
export function textMessage(
  from: string,
  text: string,
  options: { id?: string; fromMe?: boolean; remoteJidAlt?: string } = {},
): Partial<WAMessage> {
  messageCounter += 1;
  return {
    key: {
      id: options.id ?? `IN${messageCounter}`,
      remoteJid: from,
      fromMe: options.fromMe ?? false,
      ...(options.remoteJidAlt ? { remoteJidAlt: options.remoteJidAlt } : {}),
    },
    message: { conversation: text },
    messageTimestamp: Math.floor(Date.now() / 1000),
    pushName: 'Visitor',
  };
}
