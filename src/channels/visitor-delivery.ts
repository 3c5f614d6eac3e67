import { channelOfSession } from '../conversations/session.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import type { ChannelPort, VisitorPush } from './channel-port.ts';

/** WhatsApp's Cloud API transport as deliveries need it (see CloudDelivery). */
export interface CloudReach extends Pick<ChannelPort, 'deliver'> {
  /** Whether the chatbot's WhatsApp goes through the Cloud API (else through a linked device). */
  serves(chatbotId: string): Promise<boolean>;
  /** Refuses a message the platform would refuse (the 24-hour window has closed). */
  assertCanReply(chatbotId: string, sessionId: string): Promise<void>;
}

/**
 * Delivers a push to a session's visitor from any process (a gateway, the CLI), whatever the channel:
 * a Telegram chat through the Bot API at once, a WhatsApp chat on the Cloud API through the Graph API
 * at once (any process can reach them); the widget's and a linked WhatsApp device's over the signal
 * bus to the process that holds the visitor's connection, whose `ChannelPort.deliver` hands it over.
 * An API session has no connection to push to: its visitor reads the transcript.
 */
export class VisitorDelivery {
  private readonly signals: SignalBus;
  private readonly telegram: Pick<ChannelPort, 'deliver'>;
  private readonly whatsappCloud: CloudReach;

  constructor(deps: { signals: SignalBus; telegram: Pick<ChannelPort, 'deliver'>; whatsappCloud: CloudReach }) {
    this.signals = deps.signals;
    this.telegram = deps.telegram;
    this.whatsappCloud = deps.whatsappCloud;
  }

  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    switch (channelOfSession(sessionId)) {
      case 'telegram':
        return await this.telegram.deliver(chatbotId, sessionId, push);
      case 'whatsapp':
        if (await this.whatsappCloud.serves(chatbotId))
          return await this.whatsappCloud.deliver(chatbotId, sessionId, push);
        return await this.publish(chatbotId, sessionId, push);
      case 'embed':
        return await this.publish(chatbotId, sessionId, push);
      default:
        return;
    }
  }

  /**
   * Refuses, before it is stored, a message from a person (an agent's reply) that the visitor's
   * platform would not take: on WhatsApp's Cloud API, one outside the 24-hour customer-service window.
   */
  async assertCanReply(chatbotId: string, sessionId: string): Promise<void> {
    if (channelOfSession(sessionId) !== 'whatsapp' || !(await this.whatsappCloud.serves(chatbotId))) return;
    await this.whatsappCloud.assertCanReply(chatbotId, sessionId);
  }

  private publish(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    return this.signals.publish({ kind: 'visitor', chatbot_id: chatbotId, session_id: sessionId, push });
  }
}
