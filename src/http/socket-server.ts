import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES, type Server as NodeServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Clock, Timer } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { TrustedProxies } from '../net/trusted-proxies.ts';
import type { SocketOpenGate } from '../admission/socket-open-gate.ts';
import { SocketIntake, type FrameReceiver, type IntakeLimits } from './socket-intake.ts';

/** Limits every socket of the gateway lives under. */
export interface SocketLimits extends IntakeLimits {
  /** Largest frame a client may send; a larger one closes the socket with 1009. */
  maxFrameBytes: number;
  /** How often sockets are pinged; one that has not answered the previous ping is terminated. */
  heartbeatMs: number;
  /** Bytes queued for a client that is not reading; beyond this the socket is terminated. */
  sendBufferBytes: number;
}

/** What the socket server works with besides its limits. */
export interface SocketServerDeps {
  logger: Logger;
  clock: Clock;
  /** Counts the sockets each client address opens (across every gateway). */
  opens: SocketOpenGate;
  /** Whose `X-Forwarded-For` names the client address. */
  trustedProxies: TrustedProxies;
}

/** An upgrade refused with an HTTP status and a `{"detail"}` body. */
export interface Refusal {
  status: number;
  detail: string;
  /** Sent as `Retry-After`. */
  retryAfterSeconds?: number;
}

/** A route's acceptance of an upgrade: given the open socket, it says what to do with its frames. */
export type Accept = (socket: WebSocket) => FrameReceiver;

/** A socket endpoint: decides at the upgrade, then owns the socket it accepted. */
export interface SocketRoute {
  /** `address` is the client's, as the trusted proxies tell it. */
  admit(req: IncomingMessage, url: URL, address: string): Promise<Refusal | Accept>;
}

/** The 429 detail of an upgrade from a client address that opened too many sockets. */
export const OPENS_LIMITED_DETAIL = 'Too many sockets opened from this address.';

/**
 * The gateway's websocket endpoints on its HTTP server: routing upgrades by path, a limit on the
 * sockets one client address opens, refusals as plain HTTP responses, the frame size limit, each
 * socket's frame rate and inbound queue (see SocketIntake), a ping/pong heartbeat, and a cap on
 * what a socket that stops reading may hold in memory. Routes (widget, agents) only see open
 * sockets and their frames, one at a time.
 */
export class SocketServer {
  private readonly wss: WebSocketServer;
  private readonly routes = new Map<string, SocketRoute>();
  private readonly limits: SocketLimits;
  private readonly deps: SocketServerDeps;
  private readonly logger: Logger;
  private readonly alive = new WeakMap<WebSocket, boolean>();
  private readonly intakes = new WeakMap<WebSocket, SocketIntake>();
  /** Open sockets by the path of the route that accepted them. */
  private readonly openByPath = new Map<string, number>();
  private heartbeat: Timer | undefined;
  private server: NodeServer | undefined;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    this.upgrade(req, socket, head).catch((error: unknown) => {
      this.logger.error({ err: error }, 'socket upgrade failed');
      refuse(socket, { status: 500, detail: 'Internal server error.' });
    });
  };

  constructor(limits: SocketLimits, deps: SocketServerDeps) {
    this.limits = limits;
    this.deps = deps;
    this.logger = deps.logger;
    // No compression: it costs ~300 KiB per socket in zlib state, and frames are small JSON.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrameBytes, perMessageDeflate: false });
  }

  route(path: string, route: SocketRoute): void {
    this.routes.set(path, route);
  }

  /** Takes over upgrade requests of the HTTP server and starts the heartbeat. */
  attach(server: NodeServer): void {
    this.server = server;
    server.on('upgrade', this.onUpgrade);
    this.heartbeat = this.deps.clock.setInterval(() => this.beat(), this.limits.heartbeatMs);
  }

  /**
   * Sends a frame unless the client has stopped reading: a socket whose unsent bytes exceed the cap
   * is terminated rather than allowed to grow without bound. Returns whether the frame was queued.
   */
  send(socket: WebSocket, frame: object): boolean {
    if (socket.readyState !== socket.OPEN) return false;
    if (socket.bufferedAmount > this.limits.sendBufferBytes) {
      this.logger.warn('terminated a socket that stopped reading');
      socket.terminate();
      return false;
    }
    socket.send(JSON.stringify(frame));
    return true;
  }

  /** Open sockets of every route. */
  get size(): number {
    return this.wss.clients.size;
  }

  /** Open sockets of the route at `path`. */
  openAt(path: string): number {
    return this.openByPath.get(path) ?? 0;
  }

  /** Open sockets not being read because their inbound queue is full, and frames waiting in all queues. */
  inbound(): { paused: number; waiting: number } {
    let paused = 0;
    let waiting = 0;
    for (const socket of this.wss.clients) {
      const intake = this.intakes.get(socket);
      if (intake?.paused) paused += 1;
      waiting += intake?.waiting ?? 0;
    }
    return { paused, waiting };
  }

  /**
   * Stops the heartbeat and closes every socket with 1001 (going away); sockets whose clients do
   * not answer the close within `graceMs` are terminated.
   */
  async close(graceMs = 2000): Promise<void> {
    this.deps.clock.clearTimer(this.heartbeat);
    this.server?.off('upgrade', this.onUpgrade);
    const open = [...this.wss.clients];
    const closed = open.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
    for (const socket of open) socket.close(1001, 'server shutting down');
    // The grace runs on real time, not the clock's: a stop ends even where the clock is simulated.
    const timer = setTimeout(() => open.forEach((socket) => socket.terminate()), graceMs);
    await Promise.all(closed);
    clearTimeout(timer);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const route = this.routes.get(url.pathname);
    if (!route) return refuse(socket, { status: 404, detail: 'Not found.' });
    socket.on('error', () => socket.destroy());
    // Counted before the route looks anything up, so probing for chatbots counts too.
    const address = this.deps.trustedProxies.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    const opened = await this.deps.opens.admit(address);
    if (opened.kind === 'limited') {
      return refuse(socket, { status: 429, detail: OPENS_LIMITED_DETAIL, retryAfterSeconds: opened.retryAfterSeconds });
    }
    const decision = await route.admit(req, url, address);
    if (typeof decision !== 'function') return refuse(socket, decision);
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const path = url.pathname;
      this.openByPath.set(path, this.openAt(path) + 1);
      ws.once('close', () => this.openByPath.set(path, this.openAt(path) - 1));
      this.alive.set(ws, true);
      ws.on('pong', () => this.alive.set(ws, true));
      ws.on('error', (error) => this.logger.debug({ err: error.message }, 'socket error'));
      this.intakes.set(ws, new SocketIntake(ws, decision(ws), this.limits, this.deps.clock, this.logger));
    });
  }

  private beat(): void {
    for (const socket of this.wss.clients) {
      const intake = this.intakes.get(socket);
      if (intake?.paused) {
        // Its pong waits unread behind its frames, so the ping proves nothing; a queue full for a
        // whole interval is stuck.
        if (intake.pausedForMs() >= this.limits.heartbeatMs) intake.stop('inbound queue full');
        continue;
      }
      if (!this.alive.get(socket)) {
        socket.terminate();
        continue;
      }
      this.alive.set(socket, false);
      socket.ping();
    }
  }
}

function refuse(socket: Duplex, refusal: Refusal): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail: refusal.detail });
  const retryAfter = refusal.retryAfterSeconds === undefined ? '' : `Retry-After: ${refusal.retryAfterSeconds}\r\n`;
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\n` +
      'Content-Type: application/json\r\n' +
      retryAfter +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
