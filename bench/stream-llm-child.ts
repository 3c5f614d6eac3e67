/**
 * The stream benchmark's LLM, in a process of its own so that the visitors' sockets in the parent do
 * not delay its writes: the fake OpenAI (test/fakes/fake-llm-server.ts, the real SSE wire format),
 * each reply the same pieces at the same pace. It prints one JSON line (`{"url"}`) once it listens;
 * over IPC, `report` answers with when each question's first piece was handed to the kernel, as epoch
 * milliseconds (`performance.timeOrigin + performance.now()`, comparable across processes of one
 * machine), and `stop` ends it.
 */

import { fakeOpenAi } from '../test/fakes/fake-llm-server.ts';

/** What each reply is made of, and the pace. */
export const PIECES = 30;
export const PIECE_INTERVAL_MS = 20;
export const REPLY_PIECES = Array.from({ length: PIECES }, (_, i) => (i === 0 ? 'Piece0' : ` piece${i}`));
export const REPLY = REPLY_PIECES.join('');

/** The parent's requests, and the answer to `report`: the question (the last visitor message) → when. */
export type LlmChildRequest = { type: 'report' } | { type: 'stop' };
export type FirstPieces = Array<[question: string, epochMs: number]>;

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('stream-llm-child must be started with an IPC channel');
  const openai = await fakeOpenAi().start();
  openai.behaviour = () => ({ text: REPLY, pieces: REPLY_PIECES, pieceIntervalMs: PIECE_INTERVAL_MS });
  const stop = () => void openai.stop().finally(() => process.exit(0));
  process.on('message', (request: LlmChildRequest) => {
    if (request.type === 'stop') return stop();
    const firstPieces: FirstPieces = openai.requests
      .filter((r) => r.firstPieceAt !== undefined)
      .map((r) => [String(r.body.messages.at(-1).content), performance.timeOrigin + r.firstPieceAt!]);
    send({ firstPieces, maxInFlight: openai.maxInFlight });
  });
  process.on('disconnect', stop);
  console.log(JSON.stringify({ url: `${openai.url}/v1` }));
}

if (process.argv[1] === import.meta.filename) {
  try {
    await main();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
