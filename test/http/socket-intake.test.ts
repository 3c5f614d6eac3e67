import { EventEmitter } from 'node:events';
import t from 'tap';
import type { WebSocket } from 'ws';
import { createLogger } from '../../src/logger.ts';
import { SocketIntake, type FrameReceiver } from '../../src/http/socket-intake.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

/** What SocketIntake uses of a ws socket, recording what was done to it. */
class FakeSocket extends EventEmitter {
  readonly CLOSED = 3;
  readyState = 1;
  readonly done: string[] = [];
  pause(): void {
    this.done.push('pause');
  }
  resume(): void {
    this.done.push('resume');
  }
  close(code: number, reason: string): void {
    this.done.push(`close ${code} ${reason}`);
  }
  terminate(): void {
    this.done.push('terminate');
  }
}

t.test('the first dropped frame of each run is told; a frame accepted after a refill starts a new run', async (t) => {
  const clock = new SimulatedClock();
  const socket = new FakeSocket();
  const handled: string[] = [];
  let told = 0;
  const receiver: FrameReceiver = {
    receive: async (data) => void handled.push((data as Buffer).toString()),
    overRate: () => (told += 1),
  };
  const limits = { frameRate: 10, frameBurst: 3, queueFrames: 100 };
  new SocketIntake(socket as unknown as WebSocket, receiver, limits, clock, createLogger('silent'));
  const send = (...frames: string[]) => frames.forEach((frame) => socket.emit('message', Buffer.from(frame), false));

  send('a', 'b', 'c', 'd', 'e');
  await clock.advance(0);
  t.same(handled, ['a', 'b', 'c'], 'the burst is handled');
  t.equal(told, 1, 'the run of two dropped frames is told once');

  await clock.advance(300); // three tokens at 10 a second pay the two dropped frames back, and one more
  send('f', 'g', 'h');
  await clock.advance(0);
  t.same(handled, ['a', 'b', 'c', 'f'], 'one frame accepted after the refill');
  t.equal(told, 2, 'the frames dropped after it are a new run, told once');
  t.same(socket.done, [], 'still open: the debt is two frames of a burst of three');

  send('i');
  await clock.advance(0);
  t.same(socket.done, ['pause', 'close 1008 frame rate exceeded'], 'a whole burst in debt closes it');
  t.equal(told, 2, 'the close is not told as another run');
  send('j');
  await clock.advance(1000);
  t.same(socket.done, ['pause', 'close 1008 frame rate exceeded', 'terminate'], 'cut off after the close grace');
  t.same(handled, ['a', 'b', 'c', 'f'], 'nothing read after the close');
});
