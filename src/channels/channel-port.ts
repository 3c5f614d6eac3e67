import type { WidgetHandoffPush, WidgetPush } from '../contract/widget-protocol.ts';
import { sourcesFooter } from '../conversations/citations.ts';
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

/** What a chat app adds to a reply the sources could not give, where writing it escalates (smart intent). */
export const ASK_FOR_HUMAN_HINT = 'To talk to a person, write "talk to a human".';

/**
 * What a chat app sends for a push, as plain text; undefined for one it shows otherwise (typing) or
 * not at all. A reply has its sources listed after it ("Sources:" and a line each), since chat apps
 * have no chips, and how to reach a person where the widget would offer one; a hand-off change is a
 * short line ("Maria joined the conversation.").
 */
export function chatText(push: VisitorPush): string | undefined {
  switch (push.type) {
    case 'notice':
      return push.content;
    case 'message': {
      const hint = push.handoff ? `\n\n${ASK_FOR_HUMAN_HINT}` : '';
      return push.content + sourcesFooter(push.citations ?? []) + hint;
    }
    case 'handoff':
      return handoffLine(push);
    default:
      return undefined;
  }
}

/** A hand-off change as a chat app says it. */
function handoffLine(push: WidgetHandoffPush): string {
  const name = push.agent?.name ?? 'An agent';
  if (push.change === 'joined') return `${name} joined the conversation.`;
  if (push.change === 'left') return `${name} left the conversation. The assistant is back.`;
  if (!push.open) {
    const when = push.opens_at && push.time_zone ? ` when we open (${officeTime(push.opens_at, push.time_zone)})` : '';
    return `We've asked a person to join. We're closed right now; someone will reply here${when}.`;
  }
  return push.agents_online
    ? "We've asked a person to join. They will reply here."
    : "We've asked a person to join. Nobody is available right now; they will reply here as soon as they can.";
}

/** An opening time as the office says it: "Monday 09:00 Europe/Berlin time". */
function officeTime(at: string, timeZone: string): string {
  const format = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', hour: '2-digit', minute: '2-digit' });
  return `${format.format(new Date(at))} ${timeZone} time`;
}
