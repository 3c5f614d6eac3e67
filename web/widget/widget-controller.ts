import { AI_ANSWERS } from './protocol.ts';
import type { AgentPersona, ClientFrame, Handoff, HistoryEntry, ServerFrame, WidgetConfig } from './protocol.ts';
import { connect, type ConnectionState } from './widget-connection.ts';
import { createView, type ViewHandlers, type WidgetView } from './widget-view.ts';

const WAITING = "We've asked a person to join. You can keep writing meanwhile.";
const NO_AGENTS = "No one is available right now. Leave your contact details and we'll get back to you.";
const LEAD_SAVED = "Thanks! We'll be in touch.";
/** When the office opens, in the visitor's own time ("Monday 9:00 AM"), or '' without a time. */
const opening = (at: string | null): string =>
  at ? new Date(at).toLocaleString(undefined, { weekday: 'long', hour: 'numeric', minute: '2-digit' }) : '';
const closed = (at: string | null): string =>
  `We're closed right now. Leave your contact details and we'll get back to you${at ? ` when we open (${opening(at)})` : ''}.`;
const RECONNECTING = 'Reconnecting…';
const talkingWith = (agent: AgentPersona | null): string => `You're talking with ${agent?.name ?? 'an agent'}.`;

/** Where the widget talks to. */
export interface WidgetTarget {
  origin: string;
  chatbotId: string;
}

/**
 * Who answers the conversation, as the widget shows it: one notice for the current state ("We've
 * asked a person to join", "You're talking with Maria", or the contact form when nobody is online),
 * "Talk to a human" only while the AI answers. Other notices (an error, reconnecting) show over it
 * until the state next changes or the connection is back.
 */
class HandoffView {
  private handoff: Handoff = AI_ANSWERS;
  private leadLeft = false;
  /** Offers the contact form once the owner's wait is over (nobody came). */
  private offer: ReturnType<typeof setTimeout> | undefined;
  private readonly view: WidgetView;

  constructor(view: WidgetView) {
    this.view = view;
  }

  /** The state as the gateway says it is (on connecting, and on every change). */
  apply(handoff: Handoff, leadLeft = this.leadLeft): void {
    this.handoff = handoff;
    this.leadLeft = leadLeft;
    clearTimeout(this.offer);
    this.view.setHumanButton(handoff.state === 'ai');
    const form = this.contactForm();
    if (form) this.view.leadForm.show(form);
    else this.view.leadForm.withdraw();
    this.view.setNotice(this.notice());
    if (!form && handoff.state === 'waiting' && handoff.contact_in_ms) {
      this.offer = setTimeout(() => this.apply({ ...this.handoff, contact_in_ms: 0 }), handoff.contact_in_ms);
    }
  }

  /** The contact form's invitation, when it is offered now. */
  private contactForm(): string | undefined {
    const { state, open, opens_at, contact_in_ms } = this.handoff;
    if (state !== 'waiting' || this.leadLeft) return undefined;
    if (!open) return closed(opens_at);
    return contact_in_ms === 0 ? NO_AGENTS : undefined;
  }

  /** The visitor left their details: the state's notice thanks them instead of asking again. */
  leadSaved(): void {
    this.view.leadForm.setPending(false);
    this.view.leadForm.hide();
    this.apply(this.handoff, true);
    if (this.handoff.state === 'ai') this.view.setNotice(LEAD_SAVED);
  }

  /** What the current state says, after a passing notice. */
  restore(): void {
    this.view.setNotice(this.notice());
  }

  private notice(): string {
    const { state, agent } = this.handoff;
    if (state === 'agent') return talkingWith(agent);
    if (state !== 'waiting') return '';
    if (this.leadLeft) return LEAD_SAVED;
    // The contact form says it when it is offered: one notice at a time.
    return this.contactForm() ? '' : WAITING;
  }
}

/** Renders the widget into `root` and connects it: the visitor's actions become frames, frames update the view. */
export function startWidget(root: ShadowRoot, target: WidgetTarget, config: WidgetConfig): void {
  // When the visitor wrote each line still queued: it is shown again, at that time, under a fresh history.
  const writtenAt = new WeakMap<ClientFrame, string>();
  const write = (frame: ClientFrame, content: string): void => {
    const line: HistoryEntry = { role: 'user', content, created_at: new Date().toISOString() };
    writtenAt.set(frame, line.created_at);
    view.appendMessage(line);
    connection.send(frame);
  };
  const handlers: ViewHandlers = {
    onSend(text) {
      write({ type: 'message', content: text }, text);
    },
    onEscalate() {
      connection.send({ type: 'escalate' });
    },
    onCta(cta) {
      if (cta.action === 'link' && cta.url) window.open(cta.url, '_blank', 'noopener');
      const frame: ClientFrame = { type: 'cta', id: cta.id };
      if (cta.action === 'message' && cta.message) write(frame, cta.message);
      else connection.send(frame);
    },
    onLead(lead) {
      view.leadForm.setPending(true);
      connection.send(lead);
    },
    onRate(createdAt, rating) {
      // Shown at once; the gateway's answer (feedback_saved) confirms it.
      view.setRating(createdAt, rating);
      connection.send({ type: 'feedback', created_at: createdAt, rating });
    },
  };
  const view = createView(root, config, handlers);
  const handoff = new HandoffView(view);
  const onFrame = (frame: ServerFrame): void => {
    if (frame.type === 'ready') {
      // The history cannot hold what is still queued, so those lines go back under it.
      view.replaceTranscript([...frame.history, ...unsentUserLines(connection.pending(), config, writtenAt)]);
      view.hideTyping();
      handoff.apply(frame.handoff, frame.lead_left);
    } else {
      applyFrame(view, handoff, frame);
    }
  };
  const onState = (state: ConnectionState): void => {
    if (state === 'disconnected') view.setNotice(RECONNECTING);
    // connect() reports `connecting` before `connection` is assigned; only `ready` (always later) may use it.
    if (state !== 'ready') return;
    if (view.notice() === RECONNECTING) handoff.restore();
    // A lead sent on a socket that then dropped will never be answered; one still queued is about to go out.
    view.leadForm.setPending(connection.pending().some((frame) => frame.type === 'lead'));
  };
  const connection = connect({ ...target, onFrame, onState });
}

function applyFrame(view: WidgetView, handoff: HandoffView, frame: Exclude<ServerFrame, { type: 'ready' }>): void {
  switch (frame.type) {
    case 'message':
      view.hideTyping();
      // The gateway always sends the stored time; a frame without one shows when it arrived.
      view.appendMessage(
        {
          role: frame.role,
          content: frame.content,
          created_at: frame.created_at || new Date().toISOString(),
          ...(frame.citations ? { citations: frame.citations } : {}),
          ...(frame.agent ? { agent: frame.agent } : {}),
        },
        frame.stream_id,
      );
      if (frame.handoff) view.offerHandoff();
      break;
    case 'delta':
      view.appendDelta(frame.stream_id, frame.content);
      break;
    case 'stream_end':
      view.dropStream(frame.stream_id);
      break;
    case 'feedback_saved':
      view.setRating(frame.created_at, frame.rating);
      break;
    case 'typing':
      view.showTyping(frame.agent);
      break;
    case 'handoff':
      if (frame.change === 'joined') view.appendEvent(`${frame.agent?.name ?? 'An agent'} joined`);
      if (frame.change === 'left') view.appendEvent(`${frame.agent?.name ?? 'The agent'} left, the assistant is back`);
      handoff.apply(frame);
      break;
    case 'escalated':
      // The hand-off frame that comes with it says what changed; this one is for widgets without it.
      break;
    case 'lead_saved':
      handoff.leadSaved();
      break;
    case 'error':
      // The lead form stays as it is, so a rejected submission can be corrected and sent again.
      view.hideTyping();
      view.leadForm.setPending(false);
      view.setNotice(frame.detail);
      break;
  }
}

/** The visitor's lines that are still waiting in the send queue, as the transcript would show them. */
function unsentUserLines(
  queue: readonly ClientFrame[],
  config: WidgetConfig,
  writtenAt: WeakMap<ClientFrame, string>,
): HistoryEntry[] {
  return queue.flatMap((frame) => {
    const content =
      frame.type === 'message'
        ? frame.content
        : frame.type === 'cta'
          ? config.ctas.find((cta) => cta.id === frame.id && cta.action === 'message')?.message
          : undefined;
    return content ? [{ role: 'user' as const, content, created_at: writtenAt.get(frame) ?? '' }] : [];
  });
}
