// What every provider's streaming does the same way (issue 21), run by each provider's test file
// through its official SDK against its loopback fake.
import type { Test as Tap } from 'tap';
import type { LlmCallOptions, LlmProvider } from '../../src/llm/llm-provider.ts';
import type { FakeBehaviour, FakeLlmServer } from '../fakes/fake-llm-server.ts';
import { until } from '../support/until.ts';

/** One provider under test. */
export interface StreamingSubject {
  /** The provider's name as its errors start: `openai: …`. */
  name: string;
  fake(): FakeLlmServer;
  provider(url: string, options: LlmCallOptions): LlmProvider;
  /** A refusal worth retrying, in the service's own error shape, and the message it becomes. */
  busy: FakeBehaviour;
  busyMessage: string;
  /** The message of a stream the provider's deadline ended. */
  timeoutMessage: string;
}

export const prompt = { system: 'Be brief.', turns: [{ role: 'user' as const, content: 'Hi' }] };
const OPTIONS: LlmCallOptions = { timeoutMs: 5000, maxRetries: 1 };

/** Collects what `onText` receives, and when the first piece came. */
function receiver() {
  const pieces: string[] = [];
  let firstAt: number | undefined;
  return {
    pieces,
    firstAt: () => firstAt,
    onText: (delta: string) => {
      firstAt ??= performance.now();
      pieces.push(delta);
    },
  };
}

export function streamingSuite(t: Tap, subject: StreamingSubject): void {
  const { name } = subject;
  let server: FakeLlmServer;
  t.before(async () => {
    server = await subject.fake().start();
  });
  t.teardown(() => server.stop());
  const provider = (options: Partial<LlmCallOptions> = {}) => subject.provider(server.url, { ...OPTIONS, ...options });
  t.beforeEach(() => {
    server.requests.length = 0;
  });

  t.test('pieces arrive in order and join to the reply, with the usage the stream reports', async (t) => {
    server.behaviour = () => ({
      text: 'Hello, world!',
      pieces: ['Hel', 'lo,', ' wor', 'ld', '!'],
      usage: { input: 7, output: 5, reasoning: 2 },
    });
    const received = receiver();
    const reply = await provider().generate('m1', prompt, { onText: received.onText });
    t.same(received.pieces, ['Hel', 'lo,', ' wor', 'ld', '!']);
    t.same(reply, { text: 'Hello, world!', usage: { input_tokens: 7, output_tokens: 5 } });
    t.equal(server.requests.length, 1);
    const request = server.requests[0]!;
    t.equal(request.stream, true);
    t.equal(request.streamEnd, 'done');
    t.equal(request.piecesWritten, 5);
    t.ok(request.firstPieceAt! <= received.firstAt()!, 'the first piece was written before it arrived');
  });

  t.test('by default the pieces are words that keep their spaces; an empty reply streams none', async (t) => {
    server.behaviour = () => ({ text: 'Hello there, friend.' });
    const received = receiver();
    const reply = await provider().generate('m1', prompt, { onText: received.onText });
    t.same(received.pieces, ['Hello', ' there,', ' friend.']);
    // One token per word: 'Be brief.' and 'Hi' in, three words out.
    t.same(reply, { text: 'Hello there, friend.', usage: { input_tokens: 3, output_tokens: 3 } });

    server.behaviour = () => ({ text: '' });
    const none = receiver();
    t.same(await provider().generate('m1', prompt, { onText: none.onText }), {
      text: '',
      usage: { input_tokens: 3, output_tokens: 0 },
    });
    t.same(none.pieces, []);
  });

  t.test('an abort mid-stream rejects at once, aborts the request, and no piece follows it', async (t) => {
    server.behaviour = () => ({ text: 'one two three', pieceIntervalMs: 3000 });
    const controller = new AbortController();
    const received: string[] = [];
    const started = performance.now();
    const call = provider().generate('m1', prompt, {
      signal: controller.signal,
      onText: (delta) => {
        received.push(delta);
        controller.abort();
      },
    });
    await t.rejects(call, { name: 'LlmError', message: `${name}: This operation was aborted`, emitted: true });
    t.ok(performance.now() - started < 2500, 'not waiting for the next piece');
    t.same(received, ['one']);
    const request = server.requests[0]!;
    await until(() => request.streamEnd, 'the fake to see the request closed');
    t.equal(request.streamEnd, 'closed');
    t.equal(request.piecesWritten, 1);
    t.equal(server.requests.length, 1);
  });

  t.test('pieces that had already arrived do not reach onText after an abort', async (t) => {
    server.behaviour = () => ({ text: 'one two three four five' });
    const controller = new AbortController();
    const received: string[] = [];
    const call = provider().generate('m1', prompt, {
      signal: controller.signal,
      onText: (delta) => {
        received.push(delta);
        controller.abort();
      },
    });
    await t.rejects(call, { name: 'LlmError', emitted: true });
    t.same(received, ['one']);
  });

  t.test('an onText that throws fails the call and aborts the request', async (t) => {
    server.behaviour = () => ({ text: 'one two three', pieceIntervalMs: 3000 });
    const call = provider().generate('m1', prompt, {
      onText: () => {
        throw new Error('the socket to the visitor is gone');
      },
    });
    await t.rejects(call, {
      name: 'LlmError',
      message: `${name}: the socket to the visitor is gone`,
      emitted: true,
    });
    const request = server.requests[0]!;
    await until(() => request.streamEnd, 'the fake to see the request closed');
    t.equal(request.streamEnd, 'closed');
    t.equal(request.piecesWritten, 1);
  });

  t.test('a refusal before the first piece is retried, up to maxRetries', async (t) => {
    let calls = 0;
    server.behaviour = () => (++calls === 1 ? subject.busy : { text: 'Back again.' });
    const received = receiver();
    const reply = await provider().generate('m1', prompt, { onText: received.onText });
    t.equal(reply.text, 'Back again.');
    t.same(received.pieces, ['Back', ' again.']);
    t.equal(server.requests.length, 2);

    server.requests.length = 0;
    server.behaviour = () => subject.busy;
    const none = receiver();
    await t.rejects(provider({ maxRetries: 0 }).generate('m1', prompt, { onText: none.onText }), {
      name: 'LlmError',
      message: subject.busyMessage,
      emitted: false,
    });
    t.equal(server.requests.length, 1);
    t.same(none.pieces, []);
  });

  t.test('a connection cut after a piece is not retried, and says text was emitted', async (t) => {
    server.behaviour = () => ({ text: 'one two three four', failAfterPieces: 2 });
    const received = receiver();
    await t.rejects(provider({ maxRetries: 3 }).generate('m1', prompt, { onText: received.onText }), {
      name: 'LlmError',
      message: `${name}: terminated`,
      emitted: true,
    });
    t.same(received.pieces, ['one', ' two']);
    t.equal(server.requests.length, 1);
    t.equal(server.requests[0]!.streamEnd, 'cut');
  });

  t.test('a connection cut before the first piece says no text was emitted', async (t) => {
    server.behaviour = () => ({ text: 'one two', failAfterPieces: 0 });
    const received = receiver();
    await t.rejects(provider({ maxRetries: 0 }).generate('m1', prompt, { onText: received.onText }), {
      name: 'LlmError',
      message: `${name}: terminated`,
      emitted: false,
    });
    t.same(received.pieces, []);
  });

  t.test('a stream that stalls ends at the timeout, its first pieces emitted', async (t) => {
    server.behaviour = () => ({ text: 'one two', pieceIntervalMs: 4000 });
    const received = receiver();
    const started = performance.now();
    await t.rejects(provider({ timeoutMs: 400 }).generate('m1', prompt, { onText: received.onText }), {
      name: 'LlmError',
      message: subject.timeoutMessage,
      emitted: true,
    });
    t.ok(performance.now() - started < 3000, 'not waiting for the stalled piece');
    t.same(received.pieces, ['one']);
  });

  t.test('stopping the fake ends a stream in progress', async (t) => {
    const other = await subject.fake().start();
    other.behaviour = () => ({ text: 'one two', pieceIntervalMs: 60_000 });
    const received = receiver();
    const call = subject.provider(other.url, OPTIONS).generate('m1', prompt, { onText: received.onText });
    await until(() => received.pieces.length === 1, 'the first piece');
    await other.stop();
    await t.rejects(call, { name: 'LlmError', emitted: true });
    t.equal(other.requests[0]!.streamEnd, 'closed');
  });

  t.test('without onText the call is not streamed', async (t) => {
    server.behaviour = () => ({ text: 'All at once.', pieceIntervalMs: 60_000, failAfterPieces: 0 });
    const reply = await provider().generate('m1', prompt);
    t.same(reply, { text: 'All at once.', usage: { input_tokens: 3, output_tokens: 3 } });
    const request = server.requests[0]!;
    t.equal(request.stream, false);
    t.equal(request.streamEnd, undefined);
    t.equal(request.piecesWritten, 0);
  });
}
