import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { SignalBus } from '../redis/signal-bus.ts';

/** Why a streamed reply ended without a stored message. */
export type StreamEndReason = 'taken_over' | 'failed';

/**
 * One AI reply streamed while the LLM writes it, to every gateway (over the signal bus) that holds
 * a socket of the conversation: the widget's and the agents'. Pieces written while the previous one
 * is being published go out together in the next signal, so a fast model costs one publish per
 * round trip to Redis, not one per token, and the first piece leaves at once. Signals of one
 * publisher keep their order, so the stored reply (published after `flush`) comes after every piece.
 */
export class ReplyStream {
  readonly id = randomUUID();
  private readonly signals: SignalBus;
  private readonly logger: Logger;
  private readonly chatbotId: string;
  private readonly sessionId: string;
  private waiting = '';
  private publishing: Promise<void> | undefined;
  /** Whether any piece was published. */
  started = false;

  constructor(deps: { signals: SignalBus; logger: Logger }, chatbotId: string, sessionId: string) {
    this.signals = deps.signals;
    this.logger = deps.logger;
    this.chatbotId = chatbotId;
    this.sessionId = sessionId;
  }

  /** The next piece of the reply. */
  write(text: string): void {
    if (!text) return;
    this.waiting += text;
    this.publishing ??= this.publishWaiting();
  }

  /** Resolves once every piece written so far has been published (or failed to be). */
  async flush(): Promise<void> {
    while (this.publishing) await this.publishing;
  }

  /** The reply will not come as a stored message: the sockets drop what they showed of it. */
  async end(reason: StreamEndReason): Promise<void> {
    await this.flush();
    if (!this.started) return;
    try {
      await this.signals.publish({
        kind: 'stream-end',
        chatbot_id: this.chatbotId,
        session_id: this.sessionId,
        stream_id: this.id,
        reason,
      });
    } catch (error) {
      this.logger.warn({ err: error, chatbot_id: this.chatbotId }, 'could not end a streamed reply');
    }
  }

  private async publishWaiting(): Promise<void> {
    while (this.waiting) {
      const content = this.waiting;
      this.waiting = '';
      this.started = true;
      try {
        await this.signals.publish({
          kind: 'stream',
          chatbot_id: this.chatbotId,
          session_id: this.sessionId,
          stream_id: this.id,
          content,
        });
      } catch (error) {
        // Only what is shown while the reply is written is lost: the stored reply carries all of it.
        this.logger.warn({ err: error, chatbot_id: this.chatbotId }, 'could not stream a piece of a reply');
      }
    }
    this.publishing = undefined;
  }
}
