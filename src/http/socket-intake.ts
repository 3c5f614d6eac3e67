import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { TokenBucket } from './token-bucket.ts';

/** What one socket may send. */
export interface IntakeLimits {
  /** Frames per second a socket may send on average. */
  frameRate: number;
  /** Frames a socket may send at once. */
  frameBurst: number;
  /** Frames waiting to be handled at which the gateway stops reading from the socket. */
  queueFrames: number;
}

/** What a route does with the frames of a socket it accepted. */
export interface FrameReceiver {
  /** Handles one frame; the next one waits until this settles. Should not reject (a rejection is logged). */
  receive(data: RawData, isBinary: boolean): Promise<void>;
  /** The socket went over its frame rate: tell it, once; its frames are dropped until it slows down. */
  overRate(): void;
  /**
   * Settles once the socket may be written to (a widget socket: once its ready frame is sent). A close
   * for policy waits for it, so what the socket is owed by then (the flood's error frame) goes first.
   */
  opened?: Promise<unknown>;
}

/** The detail of the error frame a socket gets when it goes over its frame rate. */
export const FRAME_RATE_DETAIL = 'Frame rate limit exceeded.';

/** Close code for a socket cut off for what it sent (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;

/** How long a socket closed for policy has to close its side before it is cut off. */
const CLOSE_GRACE_MS = 1000;

/**
 * The inbound side of one socket: frames go through a token bucket (over the rate they are dropped;
 * far over it the socket is closed with 1008), then wait in a bounded queue and are handed to the
 * route one at a time, in order. At `queueFrames` waiting the gateway stops reading the socket, so
 * TCP pushes back on the sender; it reads again once half of them are done. The frames of the TCP
 * chunk already read when reading stopped still pass the bucket, so at most `queueFrames +
 * frameBurst` frames ever wait.
 */
export class SocketIntake {
  private readonly socket: WebSocket;
  private readonly receiver: FrameReceiver;
  private readonly limits: IntakeLimits;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly bucket: TokenBucket;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private pausedSinceMicros: number | undefined;
  private overRate = false;
  private stopped = false;

  constructor(socket: WebSocket, receiver: FrameReceiver, limits: IntakeLimits, clock: Clock, logger: Logger) {
    this.socket = socket;
    this.receiver = receiver;
    this.limits = limits;
    this.clock = clock;
    this.logger = logger;
    this.bucket = new TokenBucket(limits.frameRate, limits.frameBurst, clock);
    socket.on('message', (data: RawData, isBinary: boolean) => this.arrive(data, isBinary));
  }

  /** Frames taken in and not yet handled. */
  get waiting(): number {
    return this.queued;
  }

  /** Whether reading is paused because the queue is full. */
  get paused(): boolean {
    return this.pausedSinceMicros !== undefined;
  }

  /** How long reading has been paused, in milliseconds (0 when it is not). */
  pausedForMs(): number {
    if (this.pausedSinceMicros === undefined) return 0;
    return (this.clock.nowMicros() - this.pausedSinceMicros) / 1000;
  }

  /**
   * Closes the socket with 1008 and `reason` (once it is opened, see `FrameReceiver.opened`) and reads
   * nothing more from it; a peer that has not closed its side within a second is cut off. Frames
   * already taken in are still handled.
   */
  stop(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.logger.warn({ reason }, 'closed a socket for policy');
    this.socket.pause();
    const close = () => {
      // Closed meanwhile (the peer went while the socket was being opened): nothing to cut off.
      if (this.socket.readyState === this.socket.CLOSED) return;
      this.socket.close(POLICY_VIOLATION, reason);
      const cutOff = this.clock.setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS);
      this.socket.once('close', () => this.clock.clearTimer(cutOff));
    };
    if (this.receiver.opened) void this.receiver.opened.then(close);
    else close();
  }

  private arrive(data: RawData, isBinary: boolean): void {
    if (this.stopped) return;
    const verdict = this.bucket.take();
    if (verdict === 'close') return this.stop('frame rate exceeded');
    if (verdict === 'drop') {
      if (!this.overRate) this.receiver.overRate();
      this.overRate = true;
      return;
    }
    this.overRate = false;
    this.queued += 1;
    if (this.queued >= this.limits.queueFrames && this.pausedSinceMicros === undefined) {
      this.pausedSinceMicros = this.clock.nowMicros();
      // ws's pause() stops the net.Socket (TCP backpressure) and keeps ws's own drain from resuming it.
      this.socket.pause();
    }
    this.chain = this.chain.then(() => this.handle(data, isBinary));
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    try {
      await this.receiver.receive(data, isBinary);
    } catch (error) {
      this.logger.error({ err: error }, 'socket frame failed');
    }
    this.queued -= 1;
    if (this.pausedSinceMicros !== undefined && this.queued <= this.limits.queueFrames / 2) {
      this.pausedSinceMicros = undefined;
      if (!this.stopped) this.socket.resume();
    }
  }
}
