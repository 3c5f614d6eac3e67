/**
 * The widget benchmark's baseline, in a process of its own started by widget-benchmark.ts with
 * `--expose-gc`: a bare `ws` WebSocketServer with the gateway's socket options (no compression, 16 KiB
 * frames) that sends a small ready frame to each socket it accepts and answers each frame at once
 * with an assistant message frame. It prints one JSON line (`ChildReady`) on stdout once it listens.
 *
 * Also both ends of the protocol between the benchmark and its two children: a child prints where it
 * listens, then over IPC the parent sends `measure` and gets a `ChildMeasurement` after two forced
 * collections, or `stop` and the child closes what it holds and exits.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';

/** Where the benchmark child listens: printed as one JSON line on stdout. */
export interface ChildReady {
  port: number;
  /** The chatbot the sockets belong to (any uuid for the baseline, which does not look). */
  chatbotId: string;
}

/** The child's memory after two forced collections, and the sockets it holds open then. */
export interface ChildMeasurement {
  rss: number;
  heapUsed: number;
  sockets: number;
}

/** What the parent sends over the IPC channel. */
export type ParentRequest = { type: 'measure' } | { type: 'stop' };

/** Frames are the gateway's sizes: the largest a client may send. */
export const MAX_FRAME_BYTES = 16 * 1024;
/** The reply both servers send, the instant fake LLM's text. */
export const REPLY = 'We are open from 9:00 to 17:00.';

const HOST = '127.0.0.1';
const NODE = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));

/** A benchmark child as the parent holds it: its process, where it listens, what it wrote on stderr. */
export interface Child<R = ChildReady> {
  process: ChildProcess;
  /** The JSON line it printed once it listened. */
  ready: R;
  /** The error line of what the child wrote on stderr (else its last line): why it failed, when it did. */
  lastError(): string;
}

/** Starts `script` under `node --expose-gc` with an IPC channel; resolves once it says where it listens. */
export function startChild<R = ChildReady>(script: string, env: Record<string, string>): Promise<Child<R>> {
  const child = spawn(NODE, ['--expose-gc', script], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  // The error's own line, not the stack under it or Node's version line after it.
  const lastError = () => /^\w*Error\b.*$/m.exec(stderr)?.[0] ?? stderr.trim().split('\n').at(-1) ?? '';
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const [line = '', rest] = stdout.split('\n', 2);
      if (rest === undefined) return;
      try {
        resolve({ process: child, ready: JSON.parse(line) as R, lastError });
      } catch {
        child.kill('SIGKILL');
        reject(new Error(`${script.split('/').at(-1)} printed "${line}" instead of where it listens`));
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      reject(new Error(`${script.split('/').at(-1)} ended with ${code ?? signal}: ${lastError() || 'no message'}`));
    });
  });
}

/** The child's RSS and heap after forced collections, and its open sockets. */
export function measureChild(child: Child): Promise<ChildMeasurement> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null, signal: string | null) =>
      reject(new Error(`a benchmark child ended with ${code ?? signal} while measured: ${child.lastError()}`));
    child.process.once('exit', exited);
    child.process.once('message', (answer: ChildMeasurement | { error: string }) => {
      child.process.off('exit', exited);
      if ('error' in answer) reject(new Error(`a benchmark child could not measure itself: ${answer.error}`));
      else resolve(answer);
    });
    const request: ParentRequest = { type: 'measure' };
    child.process.send(request);
  });
}

/** Asks the child to stop; kills it if it has not exited within 10 s. */
export async function stopChild(child: Child<unknown>): Promise<void> {
  const proc = child.process;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const request: ParentRequest = { type: 'stop' };
  if (proc.connected) proc.send(request);
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Lets pending immediates and timers run, then collects the heap; twice. */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the widget benchmark children need node --expose-gc');
  for (let i = 0; i < 2; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
  }
}

/**
 * Answers the parent's requests over IPC: `measure` with the process's RSS and heap after forced
 * collections and `sockets()`, `stop` by running `stop` and exiting. A lost parent also stops it.
 */
export function serveParent(sockets: () => number, stop: () => Promise<void>): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('the widget benchmark children must be started with an IPC channel');
  let stopping: Promise<void> | undefined;
  const finish = () => {
    stopping ??= stop()
      .catch((error: unknown) => console.error(error instanceof Error ? error.message : String(error)))
      .finally(() => process.exit(process.exitCode ?? 0));
  };
  process.on('message', (request: ParentRequest) => {
    if (request.type === 'stop') return finish();
    void collect()
      .then(() => {
        const { rss, heapUsed } = process.memoryUsage();
        const measurement: ChildMeasurement = { rss, heapUsed, sockets: sockets() };
        send(measurement);
      })
      // Reading RSS opens /proc/self/stat: out of descriptors, it fails (EMFILE).
      .catch((error: unknown) => send({ error: error instanceof Error ? error.message : String(error) }));
  });
  process.on('disconnect', finish);
}

/** The bare server: a ready frame on connection, an assistant message frame for every frame received. */
async function startBaseline(): Promise<void> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: MAX_FRAME_BYTES });
  wss.on('connection', (socket) => {
    socket.on('error', () => socket.terminate());
    socket.on('message', () => {
      const created_at = new Date().toISOString();
      socket.send(JSON.stringify({ type: 'message', role: 'assistant', content: REPLY, created_at }));
    });
    socket.send(JSON.stringify({ type: 'ready', session_id: `embed-${randomUUID()}`, history: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const ready: ChildReady = { port: (server.address() as AddressInfo).port, chatbotId: randomUUID() };
  serveParent(
    () => wss.clients.size,
    async () => {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
    },
  );
  console.log(JSON.stringify(ready));
}

// Run as a script (not when the gateway child or the benchmark imports the protocol above).
if (process.argv[1] === import.meta.filename) {
  try {
    await startBaseline();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
