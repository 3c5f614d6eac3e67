import type { WebSocket } from 'ws';
import type { Handoff, Message } from '../../contract/conversation.ts';
import type { WidgetPush, WidgetServerFrame } from '../../contract/widget-protocol.ts';
import type { SocketServer } from '../../http/socket-server.ts';

/** A frame for every socket of a session: a push, or a notice shown as an error. */
type SessionFrame = WidgetPush | { type: 'error'; detail: string };

/**
 * Everything sent to visitors' widgets. A session may have sockets in several tabs and several
 * gateway processes: pushes travel over Redis pub/sub (VisitorDelivery) and every process delivers
 * them to the sockets it holds; answers meant for one socket (ready, lead_saved, errors) go to it
 * directly.
 */
export class WidgetOutbound {
  private readonly sockets: SocketServer;
  /** Sockets by session; a socket's value holds pushes while its ready frame is not yet sent. */
  private readonly sessions = new Map<string, Map<WebSocket, SessionFrame[] | undefined>>();

  constructor(sockets: SocketServer) {
    this.sockets = sockets;
  }

  /**
   * Registers an open socket of a session (forgotten when it closes). Pushes are held back until
   * `ready` has sent the ready frame, so none is lost between reading the history and registering.
   */
  add(chatbotId: string, sessionId: string, socket: WebSocket): void {
    const key = sessionKey(chatbotId, sessionId);
    let members = this.sessions.get(key);
    if (!members) this.sessions.set(key, (members = new Map<WebSocket, SessionFrame[] | undefined>()));
    members.set(socket, []);
    socket.once('close', () => {
      members.delete(socket);
      if (members.size === 0 && this.sessions.get(key) === members) this.sessions.delete(key);
    });
  }

  /**
   * Sends the ready frame, then what was pushed meanwhile, less any message the history already
   * holds (it was stored before the history was read and pushed after the socket was registered).
   */
  ready(
    chatbotId: string,
    sessionId: string,
    socket: WebSocket,
    state: { history: Message[]; handoff: Handoff; leadLeft: boolean },
  ): void {
    const { history, handoff, leadLeft } = state;
    this.send(socket, { type: 'ready', session_id: sessionId, history, handoff, lead_left: leadLeft });
    const members = this.sessions.get(sessionKey(chatbotId, sessionId));
    const held = members?.get(socket);
    if (!members || !held) return;
    members.set(socket, undefined);
    const seen = new Set(history.map((m) => `${m.role}\n${m.created_at}\n${m.content}`));
    for (const push of held) {
      if (push.type === 'message' && seen.has(`${push.role}\n${push.created_at}\n${push.content}`)) continue;
      this.send(socket, push);
    }
  }

  /** A push arrived over pub/sub: delivers it to this process's sockets of the session. */
  deliver(chatbotId: string, sessionId: string, push: SessionFrame): void {
    const members = this.sessions.get(sessionKey(chatbotId, sessionId));
    if (!members) return;
    for (const [socket, held] of members) {
      if (held) held.push(push);
      else this.send(socket, push);
    }
  }

  /** To one socket only: every frame to a widget goes out here, as the contract's (src/contract/). */
  send(socket: WebSocket, frame: WidgetServerFrame): void {
    this.sockets.send(socket, frame);
  }

  /** Sessions with at least one open socket in this process. */
  get sessionCount(): number {
    return this.sessions.size;
  }
}

function sessionKey(chatbotId: string, sessionId: string): string {
  return `${chatbotId}/${sessionId}`;
}
