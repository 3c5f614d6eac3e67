import { until } from './until.ts';
import type { WidgetClient } from './widget-client.ts';

/** A message one visitor of the load sent, when (performance.now()), and the gateway's whole answer. */
export interface Sent {
  session: string;
  content: string;
  started: number;
  ended: number;
  /** REST: 200. Widget: the assistant's reply frame (the protocol's acknowledgement of a message). */
  acked: boolean;
  /**
   * REST: [status, body]. Widget: the frame, its `created_at` replaced by 'ISO' when well-formed, and
   * its `stream_id` by 'STREAM'.
   */
  answer: unknown;
}

/** One visitor: sends a message and waits for the answer to it. */
export type Say = (content: string) => Promise<{ acked: boolean; answer: unknown }>;

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

/** A REST visitor: `post` sends the chat call; a 200 acknowledges the message. */
export const restVisitor =
  (post: (content: string) => Promise<{ status: number; body: unknown }>): Say =>
  async (content) => {
    const { status, body } = await post(content);
    return { acked: status === 200, answer: [status, body] };
  };

/**
 * A widget visitor on an open socket: a message is answered by the assistant's reply frame or by an
 * error frame (typing frames in between are not answers); none within 5 s is silence, a failure.
 */
export const widgetVisitor =
  (client: WidgetClient): Say =>
  async (content) => {
    const from = client.frames.length;
    client.send({ type: 'message', content });
    const answered = () => client.frames.slice(from).find((f) => f.type === 'message' || f.type === 'error');
    const frame = await until(answered, `an answer to "${content}"`, 5000);
    // The stored reply names the stream that showed it as it was written: a fresh id every time.
    const answer =
      frame.type === 'message' && TIMESTAMP.test(frame.created_at)
        ? { ...frame, created_at: 'ISO', ...(frame.stream_id ? { stream_id: 'STREAM' } : {}) }
        : frame;
    return { acked: frame.type === 'message', answer };
  };

/**
 * Visitors saying numbered messages (`<session> says #n`), each one after another in its own
 * session, `paceMs` apart, until stopped. Every message and its answer is kept in `sent`; a visitor
 * that throws (a timeout) is recorded as an unacknowledged answer with the error's message.
 */
export class ChatLoad {
  readonly sent: Sent[] = [];
  private readonly sessions: string[];
  private running = true;
  private readonly loops: Array<Promise<void>>;

  constructor(visitors: Map<string, Say>, paceMs: number) {
    this.sessions = [...visitors.keys()];
    this.loops = [...visitors].map(([session, say]) => this.loop(session, say, paceMs));
  }

  private async loop(session: string, say: Say, paceMs: number): Promise<void> {
    for (let n = 1; this.running; n += 1) {
      const content = `${session} says #${n}`;
      const started = performance.now();
      const outcome = await say(content).catch((error: Error) => ({ acked: false, answer: error.message }));
      this.sent.push({ session, content, started, ended: performance.now(), ...outcome });
      await new Promise((resolve) => setTimeout(resolve, paceMs));
    }
  }

  /**
   * Waits until every session has `count` answers that `which` picks, to messages sent after `since`;
   * names the sessions short of it, with their last answers, if that takes over 5 s.
   */
  async each(count: number, since: number, which: (sent: Sent) => boolean, what: string): Promise<void> {
    const short = () =>
      this.sessions.filter(
        (session) => this.sent.filter((s) => s.session === session && s.started >= since && which(s)).length < count,
      );
    await until(() => short().length === 0, what, 5000).catch(() => {
      const last = short().map((session) => this.sent.findLast((s) => s.session === session));
      throw new Error(`timed out waiting for ${what}; the last answers of the sessions short: ${JSON.stringify(last)}`);
    });
  }

  /** Stops every visitor after its message in flight is answered. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
