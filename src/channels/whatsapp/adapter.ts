import type { Clock } from '../../clock.ts';
import { randomUUID } from 'node:crypto';
import type { BaileysEventMap } from '@whiskeysockets/baileys';
import type { ConversationRouter } from '../../actors/conversation-router.ts';
import type { ConversationControl } from '../../conversations/conversation-control.ts';
import type { Logger } from '../../logger.ts';
import type { ChatbotStore } from '../../store/chatbot-store.ts';
import type { WhatsAppStore } from './whatsapp-store.ts';
import { TEXT_ONLY_NOTICE } from '../channel-notices.ts';
import { chatText, type ChannelPort, type VisitorPush } from '../channel-port.ts';
import { answerTurn, tellFailure, type Deliver, type TurnChannel } from '../channel-turn.ts';
import { PerKeyQueue } from '../../per-key-queue.ts';
import { PHONE_OWNER_HOLDER, SEND_WAIT_MS, whatsappJid } from './rules.ts';
import { mapWhatsAppUpsert, type WhatsAppInbound } from './inbound.ts';
import { LinkedDevice } from './linked-device.ts';
import type { WhatsAppSocketFactory } from './socket.ts';
import type { WhatsAppCloudAdapter } from './cloud/cloud-adapter.ts';

/** What the WhatsApp channel works with. */
export interface WhatsAppDeps {
  store: WhatsAppStore;
  chatbots: ChatbotStore;
  router: ConversationRouter;
  control: ConversationControl;
  logger: Logger;
  clock: Clock;
  socketFactory: WhatsAppSocketFactory;
  /** The Cloud API transport, fed by its webhook route (any gateway; no socket, nothing to lease). */
  cloud: WhatsAppCloudAdapter;
  /** How long a process's right to run a socket lasts unless renewed (renewed every third of it). */
  leaseMs: number;
  /** The first reconnect delay; shortened in tests. */
  reconnectFirstMs?: number;
}

/** WhatsApp's typing presence fades after about 25 s; it is renewed before. */
const TYPING_RENEW_MS = 10_000;

type Addressed = Exclude<WhatsAppInbound, { kind: 'ignored' }>;

/**
 * The WhatsApp channel, through one of two transports per chatbot. The Cloud API (`cloud`): Meta's
 * webhooks in, its Graph API out, from any gateway (see WhatsAppCloudAdapter). A linked device: one
 * Baileys socket per linked chatbot, in exactly one gateway process at a time (a lease in Redis). Live messages are taken in once (by message id, across processes) and in
 * order per chat; text goes to the conversation actor, whose reply is sent back with the typing
 * presence shown meanwhile. A message the owner sends from the linked phone takes the conversation
 * over, so the AI never talks over the owner.
 */
export class WhatsAppChannel implements ChannelPort {
  readonly channel = 'whatsapp';
  /** The Cloud API transport: its webhook route hands it each delivery. */
  readonly cloud: WhatsAppCloudAdapter;
  private readonly deps: WhatsAppDeps;
  private readonly devices = new Map<string, LinkedDevice>();
  private readonly reloading = new PerKeyQueue<string>();
  /** Per chat, the messages being taken in, in order. */
  private readonly chats = new PerKeyQueue<string>();
  private readonly holder = randomUUID();
  private stopped = false;
  private readonly turns: TurnChannel;

  constructor(deps: WhatsAppDeps) {
    this.deps = deps;
    this.cloud = deps.cloud;
    this.turns = { name: 'whatsapp', ...deps, typingRenewMs: TYPING_RENEW_MS };
  }

  /** Starts a device for every chatbot that is linked or linking. */
  async start(): Promise<void> {
    for (const connection of await this.deps.store.list()) {
      if (connection.state !== 'unlinked') this.run(connection.chatbot_id);
    }
  }

  /**
   * A chatbot's connection changed (a new link, a disconnect): its device restarts from Redis, or
   * logs out and stops when the connection was removed. Reloads of one chatbot run in turn.
   */
  reload(chatbotId: string): Promise<void> {
    return this.reloading.run(chatbotId, async () => {
      if (this.stopped) return;
      const connection = await this.deps.store.find(chatbotId);
      const device = this.devices.get(chatbotId);
      this.devices.delete(chatbotId);
      await device?.stop({ logout: connection === undefined });
      if (connection && connection.state !== 'unlinked') this.run(chatbotId);
    });
  }

  /**
   * A push for a `wa_` chat of a linked device, handed over by the process that runs the chatbot's
   * socket (the others drop it): replies and notices as text, typing as the chat's presence. A Cloud
   * API chat's pushes never come this way: any process sends them (VisitorDelivery).
   */
  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    const jid = whatsappJid(sessionId);
    if (jid && this.devices.get(chatbotId)?.runsSocket()) await this.toChat(chatbotId, jid, push);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.devices.values()].map((device) => device.stop()));
    this.devices.clear();
  }

  private run(chatbotId: string): void {
    const device = new LinkedDevice(chatbotId, {
      store: this.deps.store,
      socketFactory: this.deps.socketFactory,
      logger: this.deps.logger,
      clock: this.deps.clock,
      holder: this.holder,
      leaseMs: this.deps.leaseMs,
      reconnectFirstMs: this.deps.reconnectFirstMs,
      onMessages: (from, upsert) => this.take(from, upsert),
    });
    this.devices.set(chatbotId, device);
    device.start();
  }

  /** Live messages: each taken in once, then queued behind its chat's earlier messages. */
  private take(device: LinkedDevice, upsert: BaileysEventMap['messages.upsert']): void {
    const sender = device.sender();
    for (const inbound of mapWhatsAppUpsert(upsert)) {
      if (inbound.kind === 'ignored' || !sender) continue;
      if (inbound.kind === 'owner' && sender.sentByUs(inbound.messageId)) continue;
      const taken = this.chats.run(`${device.chatbotId}/${inbound.jid}`, async () => {
        if (await this.deps.store.firstSight(device.chatbotId, inbound.messageId)) {
          await this.handle(device.chatbotId, inbound);
        }
      });
      taken.catch((error: unknown) =>
        this.deps.logger.error({ err: error, chatbot_id: device.chatbotId }, 'whatsapp message not taken in'),
      );
    }
  }

  /** Never rejects: a failure is logged and, where it helps, told to the chat. */
  private async handle(chatbotId: string, inbound: Addressed): Promise<void> {
    const deliver: Deliver = (push) => this.toChat(chatbotId, inbound.jid, push);
    try {
      if (inbound.kind === 'owner') {
        await this.deps.control.ownerReplied(chatbotId, inbound.sessionId, PHONE_OWNER_HOLDER, inbound.content);
        return;
      }
      if (inbound.kind === 'unsupported') return await deliver({ type: 'notice', content: TEXT_ONLY_NOTICE });
      const chatbot = await this.deps.chatbots.get(chatbotId);
      // The chat's next message waits only until this one is with its conversation actor.
      void answerTurn(this.turns, { chatbot, sessionId: inbound.sessionId, content: inbound.content }, deliver);
    } catch (error) {
      await tellFailure(this.turns, chatbotId, error, deliver);
    }
  }

  /** Through the chatbot's socket as it is at each call (it may reconnect meanwhile). */
  private async toChat(chatbotId: string, jid: string, push: VisitorPush): Promise<void> {
    const sender = () => this.devices.get(chatbotId)?.sender();
    const text = chatText(push);
    if (text !== undefined) await this.send(chatbotId, jid, text);
    else if (push.type === 'typing') await sender()?.typing(jid);
    else if (push.type === 'typing_stopped') await sender()?.doneTyping(jid);
    // The escalation frame shows nothing in a chat: its hand-off push says it.
  }

  /**
   * Sends through the chatbot's socket as it is now (it may have reconnected since the message came),
   * waiting for it while it reconnects in this process.
   */
  private async send(chatbotId: string, jid: string, text: string): Promise<void> {
    const sender = await this.devices.get(chatbotId)?.whenOpen(SEND_WAIT_MS);
    if (!sender) throw new SocketClosedError(chatbotId);
    await sender.sendText(jid, text);
  }
}

/** The chatbot's socket is not open in this process (it reconnects, or another process took it). */
class SocketClosedError extends Error {
  override name = 'SocketClosedError';

  constructor(chatbotId: string) {
    super(`the WhatsApp socket of chatbot ${chatbotId} is not open here`);
  }
}
