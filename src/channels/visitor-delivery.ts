import { channelOfSession } from '../conversations/session.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import type { ChannelPort, VisitorPush } from './channel-port.ts';

/**
 * Delivers a push to a session's visitor from any process (a gateway, the CLI), whatever the channel:
 * a Telegram chat through the Bot API at once (any process can reach it); the widget's and WhatsApp's
 * over the signal bus to the process that holds the visitor's connection, whose `ChannelPort.deliver`
 * hands it over. An API session has no connection to push to: its visitor reads the transcript.
 */
export class VisitorDelivery {
  private readonly signals: SignalBus;
  private readonly telegram: Pick<ChannelPort, 'deliver'>;

  constructor(deps: { signals: SignalBus; telegram: Pick<ChannelPort, 'deliver'> }) {
    this.signals = deps.signals;
    this.telegram = deps.telegram;
  }

  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    switch (channelOfSession(sessionId)) {
      case 'telegram':
        return await this.telegram.deliver(chatbotId, sessionId, push);
      case 'embed':
      case 'whatsapp':
        return await this.signals.publish({ kind: 'visitor', chatbot_id: chatbotId, session_id: sessionId, push });
      default:
        return;
    }
  }
}
