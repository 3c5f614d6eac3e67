import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import type { ConversationRouter } from '../../actors/conversation-router.ts';
import type { ConversationControl } from '../../conversations/conversation-control.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { Accept, SocketRoute, Refusal } from '../../http/socket-server.ts';
import { socketErrorDetail } from '../../http/error-response.ts';
import { readFrameObject } from '../../http/socket-frame.ts';
import { FRAME_RATE_DETAIL, type FrameReceiver } from '../../http/socket-intake.ts';
import { isUuid } from '../../uuid.ts';
import type { LeadCapture, LeadInput } from '../../leads/lead-capture.ts';
import type { Logger } from '../../logger.ts';
import type { ChatbotStore } from '../../store/chatbot-store.ts';
import type { Chatbot } from '../../chatbots/chatbot.ts';
import type { ConversationStore } from '../../store/conversation-store.ts';
import type { FeedbackStore } from '../../store/feedback-store.ts';
import type { LeadStore } from '../../store/lead-store.ts';
import type { Handoffs } from '../../conversations/handoffs.ts';
import type { Rating } from '../../contract/conversation.ts';
import type { WidgetSessionStore } from './widget-session-store.ts';
import { isWidgetSessionId, READY_HISTORY_LIMIT } from './config.ts';
import { parseWidgetFrame } from './inbound.ts';
import type { WidgetOutbound } from './outbound.ts';
import type { ChannelPort, VisitorPush } from '../channel-port.ts';
import { answerTurn, type TurnChannel } from '../channel-turn.ts';
import type { Clock } from '../../clock.ts';
import type { VisitorDelivery } from '../visitor-delivery.ts';
import type { UnansweredRecorder } from '../../unanswered/unanswered-recorder.ts';

/** What the widget channel works with. */
export interface WidgetDeps {
  chatbots: ChatbotStore;
  conversations: ConversationStore;
  control: ConversationControl;
  leadCapture: LeadCapture;
  feedback: FeedbackStore;
  leads: LeadStore;
  /** The hand-off state a socket starts with (a reload restores it). */
  handoffs: Handoffs;
  /** A reply rated down puts its question in the unanswered inbox. */
  unansweredRecorder: Pick<UnansweredRecorder, 'noteThumbsDown'>;
  widgetSessions: WidgetSessionStore;
  router: ConversationRouter;
  outbound: WidgetOutbound;
  /** Where the turn's reply and typing go: every socket of the session, in every process. */
  visitors: VisitorDelivery;
  logger: Logger;
  clock: Clock;
}

/** The 429 detail of a widget that would start one conversation too many from its address. */
export const NEW_SESSIONS_LIMITED_DETAIL = 'Too many new conversations from this address. Try again later.';

/** One visitor socket. Its frames are taken in one at a time, in the order they arrived. */
interface Visitor {
  socket: WebSocket;
  chatbotId: string;
  sessionId: string;
}

/**
 * The website widget channel (`/widget/v1/socket`): admits a socket for a chatbot and origin,
 * resumes or starts its `embed-` session, and turns visitor frames into conversation messages,
 * escalations and leads. Replies reach the visitor's sockets through `WidgetOutbound`.
 */
export class WidgetAdapter implements SocketRoute, ChannelPort {
  readonly channel = 'embed';
  private readonly deps: WidgetDeps;
  private readonly turns: TurnChannel;

  constructor(deps: WidgetDeps) {
    this.deps = deps;
    this.turns = { name: 'embed', ...deps };
  }

  /** Nothing runs between sockets: they come and go with the socket server. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing to restart: a socket reads its chatbot when admitted, and again for each message. */
  reload(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * A push for a session arrived over the signal bus: to this process's sockets of the session. A
   * notice shows as an error frame; the typing dots go with the next message.
   */
  deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    const outbound = this.deps.outbound;
    if (push.type === 'notice') outbound.deliver(chatbotId, sessionId, { type: 'error', detail: push.content });
    else if (push.type !== 'typing_stopped') outbound.deliver(chatbotId, sessionId, push);
    return Promise.resolve();
  }

  async admit(req: IncomingMessage, url: URL, address: string): Promise<Refusal | Accept> {
    const chatbotId = (url.searchParams.get('chatbot_id') ?? '').toLowerCase();
    if (!isUuid(chatbotId)) return { status: 404, detail: 'Chatbot not found.' };
    let chatbot: Chatbot;
    try {
      chatbot = await this.deps.chatbots.get(chatbotId);
    } catch (error) {
      if (error instanceof NotFoundError) return { status: 404, detail: error.detail };
      throw error;
    }
    const allowed = chatbot.settings.allowed_origins;
    if (allowed.length > 0 && !allowed.includes(req.headers.origin ?? '')) {
      return { status: 403, detail: 'Origin not allowed.' };
    }
    const given = url.searchParams.get('session_id');
    let sessionId: string;
    if (isWidgetSessionId(given) && (await this.deps.widgetSessions.known(chatbotId, given))) sessionId = given;
    else {
      const issued = await this.deps.widgetSessions.issue(chatbotId, address);
      if (issued.kind === 'limited') {
        return { status: 429, detail: NEW_SESSIONS_LIMITED_DETAIL, retryAfterSeconds: issued.retryAfterSeconds };
      }
      sessionId = issued.sessionId;
    }
    return (socket) => this.open({ socket, chatbotId, sessionId });
  }

  private open(visitor: Visitor): FrameReceiver {
    const { socket, chatbotId, sessionId } = visitor;
    this.deps.outbound.add(chatbotId, sessionId, socket);
    // Frames that arrive before the ready frame is sent wait for it.
    let isOpen = false;
    const opened = Promise.all([
      this.deps.conversations.visitorHistory(chatbotId, sessionId, READY_HISTORY_LIMIT),
      this.deps.handoffs.of(chatbotId, sessionId),
      this.deps.leads.ofSessions(chatbotId, [sessionId]),
    ])
      .then(([history, handoff, leads]) =>
        this.deps.outbound.ready(chatbotId, sessionId, socket, { history, handoff, leadLeft: leads.has(sessionId) }),
      )
      .catch((error: unknown) => {
        this.deps.logger.error({ err: error }, 'could not open a widget session');
        socket.close(1011, 'internal error');
      })
      .finally(() => (isOpen = true));
    const tooFast = () => this.deps.outbound.send(socket, { type: 'error', detail: FRAME_RATE_DETAIL });
    return {
      receive: (data, isBinary) => opened.then(() => this.take(visitor, data, isBinary)),
      // At once, so it goes out before a close that follows; never before the ready frame.
      overRate: () => (isOpen ? tooFast() : void opened.then(tooFast)),
      // A socket flooding before its ready frame is sent is closed after it, and after its error frame.
      opened,
    };
  }

  /** One frame: never throws; whatever goes wrong becomes an error frame for this socket. */
  private async take(visitor: Visitor, data: RawData, isBinary: boolean): Promise<void> {
    try {
      const command = parseWidgetFrame(readFrameObject(data, isBinary));
      if (command.kind === 'message') await this.message(visitor, command.content);
      else if (command.kind === 'escalate') await this.escalate(visitor);
      else if (command.kind === 'cta') await this.cta(visitor, command.id);
      else if (command.kind === 'feedback') await this.feedback(visitor, command.createdAt, command.rating);
      else await this.lead(visitor, command.lead);
    } catch (error) {
      this.fail(visitor, error);
    }
  }

  /**
   * Hands the message to its conversation actor. The reply and typing go to every socket of the
   * session, in every process; a failure answers this socket's frame.
   */
  private async message(visitor: Visitor, content: string): Promise<void> {
    const { chatbotId, sessionId } = visitor;
    const chatbot = await this.deps.chatbots.get(chatbotId);
    // Not awaited: the next frame (an escalation, say) must not wait for the LLM.
    void answerTurn(
      this.turns,
      { chatbot, sessionId, content },
      (push) => this.deps.visitors.deliver(chatbotId, sessionId, push),
      (error) => this.fail(visitor, error),
    );
  }

  /** The first escalation is announced to every socket of the session (and agents); later ones to this one. */
  private async escalate(visitor: Visitor): Promise<void> {
    const result = await this.deps.control.escalate(visitor.chatbotId, visitor.sessionId, { source: 'embed' });
    if (!result.first) this.deps.outbound.send(visitor.socket, { type: 'escalated' });
  }

  private async cta(visitor: Visitor, id: string): Promise<void> {
    const chatbot = await this.deps.chatbots.get(visitor.chatbotId);
    const button = chatbot.settings.ctas.find((cta) => cta.id === id);
    if (!button) throw new ValidationError('Unknown call-to-action.');
    if (button.action === 'escalate') await this.escalate(visitor);
    else if (button.action === 'message') await this.message(visitor, button.message ?? button.label);
  }

  private async lead(visitor: Visitor, input: LeadInput): Promise<void> {
    const chatbot = await this.deps.chatbots.get(visitor.chatbotId);
    const lead = await this.deps.leadCapture.capture(chatbot, visitor.sessionId, input);
    this.deps.outbound.send(visitor.socket, { type: 'lead_saved', lead_id: lead.lead_id });
  }

  /** The visitor rates a reply of their conversation; this socket is told the rating now kept. */
  private async feedback(visitor: Visitor, createdAt: string, rating: Rating | null): Promise<void> {
    const down = await this.deps.feedback.rate(visitor.chatbotId, visitor.sessionId, createdAt, rating);
    if (down)
      this.deps.unansweredRecorder.noteThumbsDown(visitor.chatbotId, visitor.sessionId, down.question, down.askedAt);
    this.deps.outbound.send(visitor.socket, { type: 'feedback_saved', created_at: createdAt, rating });
  }

  private fail(visitor: Visitor, error: unknown): void {
    const { detail, internal } = socketErrorDetail(error);
    if (internal) this.deps.logger.error({ err: error }, 'widget frame failed');
    this.deps.outbound.send(visitor.socket, { type: 'error', detail });
  }
}
