import type { WidgetPush } from '../contract/widget-protocol.ts';
import type { Channel } from '../conversations/session.ts';

/**
 * What reaches a visitor, on any channel: the widget's pushes (a reply of the AI or an agent, typing,
 * the escalation), and two that only chat apps show.
 */
export type VisitorPush =
  | WidgetPush
  /** The AI stopped working without a reply (a human took over): the typing indicator goes. */
  | { type: 'typing_stopped' }
  /** A short text from the gateway that is no message of the conversation (a refusal, "text only"). */
  | { type: 'notice'; content: string };

/**
 * A channel as a gateway runs it, behind one interface: started and stopped with the gateway,
 * reloaded when a chatbot's connection to it changes (in any process), and handed what is for a
 * visitor of one of its sessions (an AI's or an agent's reply, typing, a notice, an escalation) to
 * hand over from this process, where it holds the visitor's connection (the widget's sockets here,
 * the WhatsApp socket or Telegram bot it runs). VisitorDelivery routes a push
 * to the process that can.
 */
export interface ChannelPort {
  /** The channel of its sessions, as `channelOfSession` reads it. */
  readonly channel: Channel;
  start(): Promise<void>;
  stop(): Promise<void>;
  reload(chatbotId: string): Promise<void>;
  /** Rejects when the visitor could not be reached from here; a push the channel cannot show is dropped. */
  deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void>;
}
