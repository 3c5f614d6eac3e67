import type { Clock, Timer } from '../clock.ts';
import type { ConversationRouter } from '../actors/conversation-router.ts';
import type { InboundMessage } from '../conversations/turn-pipeline.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** A messaging channel (Telegram, WhatsApp) as a turn needs it. */
export interface MessagingChannel {
  name: 'telegram' | 'whatsapp';
  router: ConversationRouter;
  logger: Logger;
  clock: Clock;
  /** How often the platform's typing indicator is shown again while the AI works (it fades). */
  typingRenewMs: number;
}

/** One chat of a messaging channel, as a turn talks to it. */
export interface ChatLine {
  send(text: string): Promise<void>;
  typing(): Promise<void>;
  /** Takes the typing indicator away when the turn ends without a reply (a human took over). */
  doneTyping?(): Promise<void>;
}

/**
 * A chat's message through its conversation actor: typing shown (and renewed) while the AI works, the
 * reply sent to the chat, a failure told to it as {@link tellFailure} does. Never rejects.
 */
export async function answerTurn(
  channel: MessagingChannel,
  message: Omit<InboundMessage, 'channel' | 'onTyping'>,
  chat: ChatLine,
): Promise<void> {
  let typing: Timer | undefined;
  // A typing indicator that fails is only cosmetic, and it is tried again every renewal: logged at
  // debug level, it never holds up the turn.
  const showTyping = () =>
    void chat.typing().catch((error: unknown) => channel.logger.debug({ err: error }, 'typing indicator not shown'));
  const onTyping = () => {
    showTyping();
    typing ??= channel.clock.setInterval(showTyping, channel.typingRenewMs);
  };
  try {
    const outcome = await channel.router.send({ ...message, channel: channel.name, onTyping });
    channel.clock.clearTimer(typing);
    if (outcome.kind === 'failed') throw outcome.error;
    if (outcome.kind === 'reply') await chat.send(outcome.text);
    // A human took over while the AI worked: the chat stops showing it typing.
    else if (typing) await chat.doneTyping?.();
  } catch (error) {
    channel.clock.clearTimer(typing);
    await tellFailure(channel, message.chatbot.id, error, chat);
  }
}

/**
 * A domain failure (paused, quota, rate limit, provider) is told to the chat in its own words; any
 * other is logged. Never rejects.
 */
export async function tellFailure(
  channel: Pick<MessagingChannel, 'name' | 'logger'>,
  chatbotId: string,
  error: unknown,
  chat: Pick<ChatLine, 'send'>,
): Promise<void> {
  // A message for a chatbot deleted meanwhile gets no answer (its channels are being disconnected).
  if (error instanceof NotFoundError) return;
  if (!(error instanceof DomainError)) {
    channel.logger.error({ err: error, chatbot_id: chatbotId }, `${channel.name} message failed`);
    return;
  }
  await chat
    .send(error.detail)
    .catch((sendError: unknown) =>
      channel.logger.warn({ err: sendError, chatbot_id: chatbotId }, `${channel.name} notice not sent`),
    );
}
