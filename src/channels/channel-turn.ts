import type { Clock, Timer } from '../clock.ts';
import type { ConversationRouter } from '../actors/conversation-router.ts';
import type { Channel } from '../conversations/session.ts';
import type { InboundMessage } from '../conversations/turn-pipeline.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { VisitorPush } from './channel-port.ts';

/** A channel as its turns need it. */
export interface TurnChannel {
  name: Channel;
  router: ConversationRouter;
  logger: Logger;
  clock: Clock;
  /**
   * How often a chat app's typing indicator is shown again while the AI works (it fades); absent
   * where it stays until the reply (the widget).
   */
  typingRenewMs?: number;
}

/** Where one conversation's pushes go, as the channel hands them over (see ChannelPort.deliver). */
export type Deliver = (push: VisitorPush) => Promise<void>;

/**
 * A visitor's message through its conversation actor, on any channel: typing shown (and renewed)
 * while the AI works, the reply delivered, and a failure handed to `fail` (by default told to the
 * chat as {@link tellFailure} does). Never rejects.
 */
export async function answerTurn(
  channel: TurnChannel,
  message: Omit<InboundMessage, 'channel' | 'onTyping'>,
  deliver: Deliver,
  fail: (error: unknown) => void | Promise<void> = (error) => tellFailure(channel, message.chatbot.id, error, deliver),
): Promise<void> {
  let typing: Timer | undefined;
  // A typing indicator that fails is only cosmetic, and it is tried again every renewal: logged at
  // debug level, it never holds up the turn.
  const showTyping = () =>
    void deliver({ type: 'typing' }).catch((error: unknown) =>
      channel.logger.debug({ err: error }, 'typing indicator not shown'),
    );
  const onTyping = () => {
    showTyping();
    if (channel.typingRenewMs) typing ??= channel.clock.setInterval(showTyping, channel.typingRenewMs);
  };
  try {
    const outcome = await channel.router.send({ ...message, channel: channel.name, onTyping });
    channel.clock.clearTimer(typing);
    if (outcome.kind === 'failed') throw outcome.error;
    if (outcome.kind === 'reply') {
      await deliver({
        type: 'message',
        role: 'assistant',
        content: outcome.text,
        created_at: outcome.createdAt,
        ...(outcome.citations.length > 0 ? { citations: outcome.citations } : {}),
        ...(outcome.streamId ? { stream_id: outcome.streamId } : {}),
        ...(outcome.handoff && canAskForHuman(channel.name, message.chatbot) ? { handoff: true } : {}),
      });
    }
    // A human took over while the AI worked: the chat stops showing it typing.
    else if (typing) await deliver({ type: 'typing_stopped' });
  } catch (error) {
    channel.clock.clearTimer(typing);
    await fail(error);
  }
}

/**
 * Whether a visitor of the channel can ask for a human: the widget has its button; in a chat app, only
 * by writing it, which escalates when the chatbot's smart intent is on.
 */
function canAskForHuman(channel: Channel, chatbot: InboundMessage['chatbot']): boolean {
  return channel === 'embed' || chatbot.settings.escalation.smart_intent;
}

/**
 * A domain failure (paused, quota, rate limit, provider) is told to the chat in its own words, as a
 * notice; any other is logged. Never rejects.
 */
export async function tellFailure(
  channel: Pick<TurnChannel, 'name' | 'logger'>,
  chatbotId: string,
  error: unknown,
  deliver: Deliver,
): Promise<void> {
  // A message for a chatbot deleted meanwhile gets no answer (its channels are being disconnected).
  if (error instanceof NotFoundError) return;
  if (!(error instanceof DomainError)) {
    channel.logger.error({ err: error, chatbot_id: chatbotId }, `${channel.name} message failed`);
    return;
  }
  await deliver({ type: 'notice', content: error.detail }).catch((sendError: unknown) =>
    channel.logger.warn({ err: sendError, chatbot_id: chatbotId }, `${channel.name} notice not sent`),
  );
}
