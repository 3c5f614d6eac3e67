/**
 * A worker thread that floods one websocket of the gateway, off the test's own event loop: it
 * connects, sends an optional first frame and waits for the answer of the given type, then sends up
 * to `count` copies of `frame` as fast as ws can write them, in batches so that it notices when the
 * server closes the socket. Reports go to the parent as `FloodReport` messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

/** What to flood. */
export interface FloodOrder {
  url: string;
  /** Sent first, e.g. an agent's auth frame, and answered by a frame of type `answer`. */
  first?: { frame: string; answer: string };
  frame: string;
  count: number;
}

/** What the flooder tells its parent. */
export type FloodReport =
  | { kind: 'flooding' }
  | { kind: 'done'; sent: number; sendMs: number; code: number; reason: string; errorFrames: string[] };

const BATCH = 2000;

function flood(order: FloodOrder, report: (message: FloodReport) => void): void {
  const socket = new WebSocket(order.url);
  const errorFrames: string[] = [];
  let sent = 0;
  let started = 0;
  let finished = 0;
  const batch = () => {
    for (let i = 0; i < BATCH && sent < order.count && socket.readyState === WebSocket.OPEN; i += 1) {
      socket.send(order.frame);
      sent += 1;
    }
    if (sent < order.count && socket.readyState === WebSocket.OPEN) setImmediate(batch);
    else finished = performance.now();
  };
  const start = () => {
    report({ kind: 'flooding' });
    started = performance.now();
    batch();
  };
  socket.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { type: string; detail?: string };
    if (frame.type === 'error') errorFrames.push(frame.detail ?? '');
    if (order.first && frame.type === order.first.answer && started === 0) start();
  });
  socket.on('open', () => {
    if (order.first) socket.send(order.first.frame);
    else start();
  });
  socket.on('error', () => {});
  socket.on('close', (code, reason) => {
    const sendMs = (finished || performance.now()) - started;
    report({ kind: 'done', sent, sendMs, code, reason: reason.toString('utf8'), errorFrames });
  });
}

if (parentPort) {
  const port = parentPort;
  flood(workerData as FloodOrder, (message) => port.postMessage(message));
}
