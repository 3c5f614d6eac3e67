import { parseServerFrame, type ClientFrame, type ServerFrame } from './protocol.ts';

/** `connecting` until the server's ready frame, `ready` after it, `disconnected` while waiting to retry. */
export type ConnectionState = 'connecting' | 'ready' | 'disconnected';

/** What {@link connect} needs. */
export interface ConnectionOptions {
  /** The gateway's origin, e.g. `https://chat.example.com`. */
  origin: string;
  chatbotId: string;
  /** Every parsed frame; the ready frame arrives before the queued frames are flushed. */
  onFrame(frame: ServerFrame): void;
  onState(state: ConnectionState): void;
}

/** The widget's socket to the gateway, reconnecting on its own. */
export interface WidgetConnection {
  /** Sends now when ready, otherwise queues the frame until the next ready frame. */
  send(frame: ClientFrame): void;
  /** Frames waiting for the next ready frame, oldest first. */
  pending(): readonly ClientFrame[];
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;

/** Exponential backoff with jitter: a random delay in the upper half of 500 ms · 2^attempt, capped at 30 s. */
export function backoffDelay(attempt: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

/** Remembers the session id per chatbot in `localStorage`, or in memory where storage is unavailable. */
function sessionStore(chatbotId: string): { get(): string | null; set(id: string): void } {
  const key = `switchboard:${chatbotId}:session`;
  let remembered: string | null = null;
  return {
    get() {
      try {
        return localStorage.getItem(key) ?? remembered;
      } catch {
        // Storage is blocked in some privacy modes and sandboxed iframes.
        return remembered;
      }
    },
    set(id) {
      remembered = id;
      try {
        localStorage.setItem(key, id);
      } catch {
        // As above; the in-memory copy still resumes the session on reconnect.
      }
    },
  };
}

function socketUrl(origin: string, chatbotId: string, sessionId: string | null): string {
  const url = new URL('/widget/v1/socket', origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('chatbot_id', chatbotId);
  if (sessionId) url.searchParams.set('session_id', sessionId);
  return url.href;
}

/** Opens the socket and keeps it open until the page goes away. */
export function connect(options: ConnectionOptions): WidgetConnection {
  const session = sessionStore(options.chatbotId);
  const queue: ClientFrame[] = [];
  let socket: WebSocket | null = null;
  let ready = false;
  let attempt = 0;

  const flush = (): void => {
    // A closing socket drops what it is given without an error, so frames wait for the next ready frame.
    while (ready && socket?.readyState === WebSocket.OPEN && queue.length > 0) {
      socket.send(JSON.stringify(queue.shift()));
    }
  };

  const onMessage = (event: MessageEvent): void => {
    if (typeof event.data !== 'string') return;
    const frame = parseServerFrame(event.data);
    if (!frame) return;
    if (frame.type === 'ready') {
      ready = true;
      attempt = 0;
      session.set(frame.session_id);
      options.onState('ready');
    }
    options.onFrame(frame);
    if (frame.type === 'ready') flush();
  };

  const open = (): void => {
    options.onState('connecting');
    const current = new WebSocket(socketUrl(options.origin, options.chatbotId, session.get()));
    socket = current;
    current.addEventListener('message', onMessage);
    // Every failure ends in `close` (an `error` is always followed by one), so retrying lives here only.
    current.addEventListener('close', () => {
      socket = null;
      ready = false;
      options.onState('disconnected');
      setTimeout(open, backoffDelay(attempt++));
    });
  };

  open();
  return {
    send(frame) {
      queue.push(frame);
      flush();
    },
    pending: () => queue.slice(),
  };
}
