import type { AgentCommandFrame, AgentSuggestFrame, AuthFrame } from '../../src/contract/agent-protocol.ts';
import { parseServerFrame, type Command, type ConversationRef, type ServerFrame } from './console-protocol.ts';

/** `connecting` until the server accepts the token, `ready` after it, `disconnected` while waiting to retry. */
export type ConnectionState = 'connecting' | 'ready' | 'disconnected';

/** A command's answer. */
export type CommandResult = { ok: true } | { ok: false; detail: string };

/** A suggestion's answer: the draft, or why there is none. */
export type SuggestionResult = { ok: true; content: string } | { ok: false; detail: string };

/** Any answer to a frame with a `ref`: `content` when it was a suggestion. */
type Answer = { ok: true; content?: string } | { ok: false; detail: string };

/** The frames the connection hands on: everything but the answers to commands. */
export type PushedFrame = Exclude<ServerFrame, { type: 'authenticated' | 'ok' | 'suggestion' | 'error' }>;

/** What {@link AgentConnection} reports. */
export interface ConnectionHandlers {
  onState(state: ConnectionState): void;
  onAuthenticated(): void;
  onFrame(frame: PushedFrame): void;
  /** An error frame that answers no command. */
  onError(detail: string): void;
  /** The server refused the token (close code 4401); the connection has stopped for good. */
  onRefused(detail: string): void;
}

/** The close code the gateway uses for a refused token. */
export const REFUSED_CODE = 4401;
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
const NOT_CONNECTED = 'Not connected to the server; try again once it reconnects.';
const CONNECTION_LOST = 'The connection dropped before the server answered; check the conversation and try again.';
const MALFORMED_ANSWER = "Could not read the server's answer.";

/** Exponential backoff with jitter: a random delay in the upper half of 500 ms · 2^attempt, capped at 30 s. */
export function backoffDelay(attempt: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

function socketUrl(): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/agents/v1/socket`;
}

/** The console's socket to the gateway, signed in with one token and reconnecting on its own. */
export class AgentConnection {
  private readonly token: string;
  private readonly handlers: ConnectionHandlers;
  private readonly pending = new Map<string, (answer: Answer) => void>();
  private socket: WebSocket | null = null;
  private ready = false;
  private stopped = false;
  private attempt = 0;
  private nextRef = 1;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  // The error frame that precedes a 4401 close carries the detail to show.
  private lastUnansweredError = '';

  /** Opens the socket and authenticates with `token`; it stays open until {@link AgentConnection.close}. */
  constructor(token: string, handlers: ConnectionHandlers) {
    this.token = token;
    this.handlers = handlers;
    this.open();
  }

  /** Sends a command with a fresh `ref`; resolves with its answer, or a failure if the socket is not ready or drops. */
  async command(command: Command): Promise<CommandResult> {
    const answer = await this.ask<AgentCommandFrame>(command);
    return answer.ok ? { ok: true } : answer;
  }

  /** Asks for a draft reply in a conversation this agent holds; resolves with it or the reason there is none. */
  async suggest(conversation: ConversationRef): Promise<SuggestionResult> {
    const { chatbot_id, session_id } = conversation;
    const answer = await this.ask<AgentSuggestFrame>({ type: 'suggest', chatbot_id, session_id });
    if (!answer.ok) return answer;
    return answer.content === undefined
      ? { ok: false, detail: MALFORMED_ANSWER }
      : { ok: true, content: answer.content };
  }

  private ask<F extends { ref?: unknown }>(frame: Omit<F, 'ref'>): Promise<Answer> {
    const socket = this.socket;
    if (!this.ready || socket?.readyState !== WebSocket.OPEN)
      return Promise.resolve({ ok: false, detail: NOT_CONNECTED });
    const ref = `c${this.nextRef++}`;
    const answered = new Promise<Answer>((resolve) => this.pending.set(ref, resolve));
    socket.send(JSON.stringify({ ...frame, ref }));
    return answered;
  }

  /** Closes the socket and stops reconnecting (sign-out). */
  close(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.socket?.close(1000, 'Signed out');
  }

  private open(): void {
    this.handlers.onState('connecting');
    this.lastUnansweredError = '';
    const socket = new WebSocket(socketUrl());
    this.socket = socket;
    socket.addEventListener('open', () =>
      socket.send(JSON.stringify({ type: 'auth', token: this.token } satisfies AuthFrame)),
    );
    socket.addEventListener('message', (event: MessageEvent) => {
      const frame = typeof event.data === 'string' ? parseServerFrame(event.data) : null;
      if (frame && this.socket === socket && !this.stopped) this.onFrame(frame);
    });
    // Every failure ends in `close` (an `error` is always followed by one), so retrying lives there only.
    socket.addEventListener('close', (event) => this.onClose(event));
  }

  private settle(ref: string, result: Answer): void {
    this.pending.get(ref)?.(result);
    this.pending.delete(ref);
  }

  private onFrame(frame: ServerFrame): void {
    if (frame.type === 'authenticated') {
      this.ready = true;
      this.attempt = 0;
      this.handlers.onState('ready');
      this.handlers.onAuthenticated();
    } else if (frame.type === 'ok') {
      this.settle(frame.ref, { ok: true });
    } else if (frame.type === 'suggestion') {
      this.settle(frame.ref, { ok: true, content: frame.content });
    } else if (frame.type === 'error') {
      if (frame.ref !== null && this.pending.has(frame.ref)) {
        return this.settle(frame.ref, { ok: false, detail: frame.detail });
      }
      this.lastUnansweredError = frame.detail;
      // Before authentication an error is the refusal, reported with the close that follows it.
      if (this.ready) this.handlers.onError(frame.detail);
    } else {
      this.handlers.onFrame(frame);
    }
  }

  private onClose(event: CloseEvent): void {
    this.socket = null;
    this.ready = false;
    for (const ref of [...this.pending.keys()]) this.settle(ref, { ok: false, detail: CONNECTION_LOST });
    if (this.stopped) return;
    if (event.code === REFUSED_CODE) {
      this.stopped = true;
      this.handlers.onRefused(this.lastUnansweredError || 'Invalid agent token.');
      return;
    }
    this.handlers.onState('disconnected');
    this.retryTimer = setTimeout(() => this.open(), backoffDelay(this.attempt++));
  }
}
