import type { Channel } from '../conversations/session.ts';
import type { VisitorPush } from '../redis/signal-bus.ts';

/**
 * A channel as a gateway runs it, behind one interface: started and stopped with the gateway,
 * reloaded when a chatbot's connection to it changes (in any process), and handed the pushes (an
 * agent's reply, typing, an escalation) for its sessions whose visitor connection this process holds.
 * `deliver` is absent where no process holds a connection: Telegram's Bot API is reached from
 * whichever process sends (see VisitorDelivery).
 */
export interface ChannelPort {
  /** The channel of its sessions, as `channelOfSession` reads it. */
  readonly channel: Channel;
  start(): Promise<void>;
  stop(): Promise<void>;
  reload(chatbotId: string): Promise<void>;
  deliver?(chatbotId: string, sessionId: string, push: VisitorPush): void;
}
