import { channelOfSession } from '../conversations/session.ts';
import type { SignalBus, VisitorPush } from '../redis/signal-bus.ts';

/** Sends text to a Telegram chat (any process can: the Bot API needs no connection of ours). */
export interface TelegramDelivery {
  send(chatbotId: string, sessionId: string, text: string): Promise<void>;
}

/**
 * Delivers a push to a session's visitor from any process (a gateway, the CLI), whatever the channel:
 * a Telegram chat through the Bot API at once; the widget's and WhatsApp's over the signal bus to the
 * process that holds the visitor's connection (each gateway's `ChannelPort.deliver`). An API session
 * has no connection to push to: its visitor reads the transcript.
 */
export class VisitorDelivery {
  private readonly signals: SignalBus;
  private readonly telegram: TelegramDelivery;

  constructor(deps: { signals: SignalBus; telegram: TelegramDelivery }) {
    this.signals = deps.signals;
    this.telegram = deps.telegram;
  }

  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    switch (channelOfSession(sessionId)) {
      case 'telegram':
        // Only messages: a Telegram chat shows no escalation or typing pushed from elsewhere.
        if (push.type === 'message') await this.telegram.send(chatbotId, sessionId, push.content);
        return;
      case 'embed':
      case 'whatsapp':
        await this.signals.publish({ kind: 'visitor', chatbot_id: chatbotId, session_id: sessionId, push });
        return;
      default:
        return;
    }
  }
}
