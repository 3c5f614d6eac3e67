import WebSocket from 'ws';

/** A frame the gateway sent, parsed. */
export type Frame = Record<string, any> & { type: string };

/** A refused upgrade: the HTTP status and body the gateway answered with. */
export interface Refused {
  status: number;
  body: any;
}

class RefusedError extends Error implements Refused {
  readonly status: number;
  readonly body: any;
  constructor(status: number, body: any) {
    super(`upgrade refused with ${status}`);
    this.status = status;
    this.body = body;
  }
}

/**
 * A real ws client of the widget socket that keeps every frame it receives, in order, and lets a
 * test wait for the next frames of a type.
 */
export class WidgetClient {
  readonly frames: Frame[] = [];
  readonly socket: WebSocket;
  closeCode: number | undefined;
  /** The reason of the close frame received, if any. */
  closeReason: string | undefined;
  /** Frames already returned by `next`. */
  private readonly taken = new Set<number>();
  private readonly waiters = new Set<() => void>();
  private readonly closed: Promise<number>;

  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString('utf8')) as Frame);
      for (const wake of this.waiters) wake();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString('utf8');
        for (const wake of this.waiters) wake();
        resolve(code);
      });
    });
  }

  /** Opens a socket; rejects with a Refused when the upgrade is refused. */
  static connect(
    baseUrl: string,
    query: Record<string, string>,
    options: WebSocket.ClientOptions = {},
  ): Promise<WidgetClient> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/widget/v1/socket?${new URLSearchParams(query).toString()}`;
    return WidgetClient.at(url, options);
  }

  /** Opens a socket at any URL of the gateway (the agent socket, say). */
  static at(url: string, options: WebSocket.ClientOptions = {}): Promise<WidgetClient> {
    const socket = new WebSocket(url, options);
    const client = new WidgetClient(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => reject(new RefusedError(res.statusCode ?? 0, JSON.parse(body))));
      });
      socket.once('error', reject);
    });
  }

  /** Opens a socket and waits for its ready frame. */
  static async ready(baseUrl: string, query: Record<string, string>, options: WebSocket.ClientOptions = {}) {
    const client = await WidgetClient.connect(baseUrl, query, options);
    const ready = await client.next('ready');
    return { client, ready };
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The earliest frame of this type not yet returned (frames of other types stay available). */
  async next(type: string | readonly string[], timeoutMs = 5000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    const types = typeof type === 'string' ? [type] : type;
    for (;;) {
      const index = this.frames.findIndex((frame, i) => !this.taken.has(i) && types.includes(frame.type));
      if (index >= 0) {
        this.taken.add(index);
        return this.frames[index]!;
      }
      if (this.closeCode !== undefined)
        throw new Error(`socket closed (${this.closeCode}) before a ${types.join(' or ')} frame`);
      if (Date.now() > deadline) throw new Error(`no ${types.join(' or ')} frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(0, deadline - Date.now()));
        this.waiters.add(wake);
      });
    }
  }

  /** Frames received from now on until `ms` passes (for asserting that nothing more came). */
  async quietFor(ms: number): Promise<Frame[]> {
    const from = this.frames.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.frames.slice(from);
  }

  /** Resolves with the close code. */
  whenClosed(): Promise<number> {
    return this.closed;
  }

  close(): Promise<number> {
    this.socket.close();
    return this.closed;
  }
}
