import type { ClientFrame, HistoryEntry, ServerFrame, WidgetConfig } from './protocol.ts';
import { fetchConfig } from './widget-config.ts';
import { connect, type ConnectionState } from './widget-connection.ts';
import { createView, type ViewHandlers, type WidgetView } from './widget-view.ts';

const ESCALATED = "We've asked a human to join.";
const NO_AGENTS = "No one is available right now — leave your contact and we'll get back to you.";
const LEAD_SAVED = "Thanks! We'll be in touch.";
const RECONNECTING = 'Reconnecting…';

/** Where the widget talks to. */
export interface WidgetTarget {
  origin: string;
  chatbotId: string;
}

/** Renders the widget into `root` and connects it: the visitor's actions become frames, frames update the view. */
export function startWidget(root: ShadowRoot, target: WidgetTarget, config: WidgetConfig): void {
  const handlers: ViewHandlers = {
    onSend(text) {
      view.appendMessage('user', text);
      connection.send({ type: 'message', content: text });
    },
    onEscalate() {
      connection.send({ type: 'escalate' });
    },
    onCta(cta) {
      if (cta.action === 'link' && cta.url) window.open(cta.url, '_blank', 'noopener');
      if (cta.action === 'message' && cta.message) view.appendMessage('user', cta.message);
      connection.send({ type: 'cta', id: cta.id });
    },
    onLead(lead) {
      view.leadForm.setPending(true);
      connection.send(lead);
    },
  };
  const view = createView(root, config, handlers);
  const onFrame = (frame: ServerFrame): void => {
    if (frame.type === 'ready') {
      // The history cannot hold what is still queued, so those lines go back under it.
      view.replaceTranscript([...frame.history, ...unsentUserLines(connection.pending(), config)]);
      view.hideTyping();
    } else {
      applyFrame(view, frame, () => void offerLeadWhenNoAgents(view, target));
    }
  };
  const onState = (state: ConnectionState): void => {
    if (state === 'disconnected') view.setNotice(RECONNECTING);
    // connect() reports `connecting` before `connection` is assigned; only `ready` (always later) may use it.
    if (state !== 'ready') return;
    if (view.notice() === RECONNECTING) view.setNotice('');
    // A lead sent on a socket that then dropped will never be answered; one still queued is about to go out.
    view.leadForm.setPending(connection.pending().some((frame) => frame.type === 'lead'));
  };
  const connection = connect({ ...target, onFrame, onState });
}

function applyFrame(view: WidgetView, frame: Exclude<ServerFrame, { type: 'ready' }>, onEscalated: () => void): void {
  switch (frame.type) {
    case 'message':
      view.hideTyping();
      view.appendMessage(frame.role, frame.content);
      // A human has joined: the "no one is available" offer no longer holds (unless it is being used).
      if (frame.role === 'agent') {
        view.leadForm.withdraw();
        if (view.notice() === ESCALATED) view.setNotice('');
      }
      break;
    case 'typing':
      view.showTyping();
      break;
    case 'escalated':
      view.setNotice(ESCALATED);
      onEscalated();
      break;
    case 'lead_saved':
      view.leadForm.setPending(false);
      view.leadForm.hide();
      view.setNotice(LEAD_SAVED);
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
): Pick<HistoryEntry, 'role' | 'content'>[] {
  return queue.flatMap((frame) => {
    const content =
      frame.type === 'message'
        ? frame.content
        : frame.type === 'cta'
          ? config.ctas.find((cta) => cta.id === frame.id && cta.action === 'message')?.message
          : undefined;
    return content ? [{ role: 'user' as const, content }] : [];
  });
}

async function offerLeadWhenNoAgents(view: WidgetView, target: WidgetTarget): Promise<void> {
  const result = await fetchConfig(target.origin, target.chatbotId);
  if (result.ok && !result.config.agents_online) view.leadForm.show(NO_AGENTS);
}
