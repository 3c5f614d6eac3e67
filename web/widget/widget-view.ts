import { h } from '../shared/dom.ts';
import { createLeadForm, type LeadForm } from './lead-form.ts';
import { messageElement, type OnRate } from './message-element.ts';
import type { AgentPersona, Cta, HistoryEntry, LeadFrame, Rating, WidgetConfig } from './protocol.ts';
import { themeVariables, WIDGET_CSS } from './widget-styles.ts';

/** What the visitor does, for the controller to act on. */
export interface ViewHandlers {
  onSend: (text: string) => void;
  onEscalate: () => void;
  onCta: (cta: Cta) => void;
  onLead: (lead: LeadFrame) => void;
  /** The visitor rates the reply written at `createdAt` (`null`: takes the rating back). */
  onRate: OnRate;
}

/** The widget's DOM, inside its shadow root. */
export interface WidgetView {
  /** Replaces every rendered message (the welcome message stays on top). */
  replaceTranscript(entries: readonly HistoryEntry[]): void;
  /**
   * A message with its time (`created_at`, a timestamp); one whose time does not parse shows none. A
   * reply of a stream takes the place of what the stream showed.
   */
  appendMessage(message: HistoryEntry, streamId?: string): void;
  /** The next piece of a reply being written (the first one starts it, and the typing dots go). */
  appendDelta(streamId: string, text: string): void;
  /** A reply being written will not come: what was shown of it goes. */
  dropStream(streamId: string): void;
  /** Shows the rating kept for the reply written at `createdAt`. */
  setRating(createdAt: string, rating: Rating | null): void;
  /** Under the last reply (the sources had nothing to answer from): a button that asks for a person. */
  offerHandoff(): void;
  /** A line in the transcript that is no one's message ("Maria joined"). */
  appendEvent(text: string): void;
  /** Shows or hides "Talk to a human" (hidden once a human was asked for, or is here). */
  setHumanButton(shown: boolean): void;
  /** Shows the typing indicator for at most a minute: "Maria is typing…" for an agent. */
  showTyping(agent?: AgentPersona): void;
  hideTyping(): void;
  /** Sets the notice line; `''` hides it. */
  setNotice(text: string): void;
  notice(): string;
  leadForm: LeadForm;
}

const TYPING_TIMEOUT_MS = 60_000;
const SVG_NS = 'http://www.w3.org/2000/svg';
const CHAT_ICON = 'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H8l-5 4V5a2 2 0 0 1 1-2z';

function chatIcon(): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('d', CHAT_ICON);
  svg.append(path);
  return svg;
}

/** The text area and its send button: Enter sends, Shift+Enter starts a new line. */
function composer(onSend: (text: string) => void): { element: HTMLDivElement; input: HTMLTextAreaElement } {
  const input = h('textarea', {
    class: 'sb-input',
    attrs: { rows: '1', placeholder: 'Type a message…', 'aria-label': 'Message' },
  });
  const send = h('button', { class: 'sb-send', text: 'Send', attrs: { type: 'button' } });
  const fit = (): void => {
    input.style.height = 'auto';
    input.style.height = `${input.scrollHeight + 2}px`;
  };
  const submit = (): void => {
    const text = input.value.trim();
    if (!text) return;
    onSend(text);
    input.value = '';
    fit();
  };
  send.addEventListener('click', submit);
  input.addEventListener('input', fit);
  input.addEventListener('keydown', (event) => {
    // isComposing: Enter also confirms an IME candidate (Chinese, Japanese…), which must not send.
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    submit();
  });
  return { element: h('div', { class: 'sb-composer' }, [input, send]), input };
}

function ctaButtons(ctas: readonly Cta[], onCta: (cta: Cta) => void): HTMLDivElement {
  return h(
    'div',
    { class: 'sb-ctas' },
    ctas.map((cta) => {
      const button = h('button', {
        class: 'sb-chip',
        text: cta.label,
        attrs: { type: 'button', 'data-cta-id': cta.id },
      });
      button.addEventListener('click', () => onCta(cta));
      return button;
    }),
  );
}

function typingIndicator(): HTMLDivElement {
  const dots = h('span', { class: 'sb-dots' }, [h('span'), h('span'), h('span')]);
  const who = h('span', { class: 'sb-typing-who' });
  return h('div', { class: 'sb-typing', attrs: { hidden: '', role: 'status', 'aria-label': 'Typing…' } }, [dots, who]);
}

/**
 * Opens and closes the panel from the bubble, the header's close button and Escape (wherever the
 * widget's focus is: in the panel or on the bubble).
 */
function wireOpenClose(
  widget: HTMLElement,
  panel: HTMLElement,
  bubble: HTMLButtonElement,
  close: HTMLButtonElement,
  input: HTMLElement,
): void {
  const setOpen = (open: boolean): void => {
    panel.hidden = !open;
    bubble.setAttribute('aria-expanded', String(open));
    bubble.setAttribute('aria-label', open ? 'Close chat' : 'Open chat');
    if (open) input.focus();
  };
  setOpen(false);
  bubble.addEventListener('click', () => setOpen(panel.hidden));
  close.addEventListener('click', () => {
    setOpen(false);
    bubble.focus();
  });
  widget.addEventListener('keydown', (event) => {
    // isComposing: Escape also cancels an IME candidate, which must not close the chat.
    if (event.key === 'Escape' && !event.isComposing && !panel.hidden) close.click();
  });
}

/** Builds the bubble and the (closed) panel into `root`. */
export function createView(root: ShadowRoot, config: WidgetConfig, handlers: ViewHandlers): WidgetView {
  const title = config.title || config.name || 'Chat';
  const messages = h('div', { class: 'sb-messages', attrs: { role: 'log', 'aria-live': 'polite' } });
  const typing = typingIndicator();
  const noticeLine = h('div', { class: 'sb-notice', attrs: { role: 'status' } });
  const leadForm = createLeadForm(config.lead_fields, handlers.onLead);
  const { element: composerElement, input } = composer(handlers.onSend);
  const human = h('button', { class: 'sb-chip sb-human', text: 'Talk to a human', attrs: { type: 'button' } });
  human.addEventListener('click', () => handlers.onEscalate());
  const close = h('button', { class: 'sb-close', text: '×', attrs: { type: 'button', 'aria-label': 'Close chat' } });
  const header = h('div', { class: 'sb-header' }, [h('div', { class: 'sb-title', text: title }), close]);
  const actions = h('div', { class: 'sb-actions' }, [ctaButtons(config.ctas, handlers.onCta), human]);
  // The contact form is a card in the transcript (it scrolls with it), not a pane that squeezes it.
  const panel = h('div', { class: 'sb-panel', attrs: { hidden: '', role: 'dialog', 'aria-label': title } }, [
    header,
    messages,
    typing,
    actions,
    noticeLine,
    composerElement,
  ]);
  const bubble = h('button', { class: 'sb-bubble', attrs: { type: 'button' } }, [chatIcon()]);
  const rootElement = h('div', { class: 'sb-root' }, [panel, bubble]);
  wireOpenClose(rootElement, panel, bubble, close, input);
  for (const [name, value] of Object.entries(themeVariables(config.color))) rootElement.style.setProperty(name, value);
  root.append(h('style', { text: WIDGET_CSS }), rootElement);
  return viewApi(config.welcome_message, { messages, typing, noticeLine, human }, leadForm, handlers);
}

function viewApi(
  welcome: string,
  parts: { messages: HTMLDivElement; typing: HTMLDivElement; noticeLine: HTMLDivElement; human: HTMLButtonElement },
  leadForm: LeadForm,
  handlers: Pick<ViewHandlers, 'onRate' | 'onEscalate'>,
): WidgetView {
  const { messages, typing, noticeLine, human } = parts;
  const { onRate } = handlers;
  /** Replies being written, by stream. */
  const streaming = new Map<string, HTMLDivElement>();
  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  const scrollToEnd = (): void => {
    messages.scrollTop = messages.scrollHeight;
  };
  const hideTyping = (): void => {
    clearTimeout(typingTimer);
    typing.hidden = true;
  };
  const view: WidgetView = {
    replaceTranscript(entries) {
      // The welcome message is not a `.sb-message`: it is the widget's greeting, not part of the stored transcript.
      const greeting = welcome ? [h('div', { class: 'sb-welcome', text: welcome })] : [];
      streaming.clear();
      const form = leadForm.element.isConnected ? [leadForm.element] : [];
      messages.replaceChildren(...greeting, ...entries.map((entry) => messageElement(entry, onRate)), ...form);
      scrollToEnd();
    },
    appendMessage(message, streamId) {
      const element = messageElement(message, onRate);
      const written = streamId === undefined ? undefined : streaming.get(streamId);
      if (written) {
        streaming.delete(streamId!);
        written.replaceWith(element);
      } else messages.append(element);
      scrollToEnd();
    },
    appendDelta(streamId, text) {
      hideTyping();
      let written = streaming.get(streamId);
      if (!written) {
        written = h('div', { class: 'sb-message sb-assistant sb-streaming', attrs: { 'aria-busy': 'true' } }, [
          h('span', { class: 'sb-text' }),
        ]);
        streaming.set(streamId, written);
        messages.append(written);
      }
      written.firstElementChild!.append(text);
      scrollToEnd();
    },
    dropStream(streamId) {
      streaming.get(streamId)?.remove();
      streaming.delete(streamId);
    },
    appendEvent(text) {
      messages.append(h('div', { class: 'sb-event', text }));
      scrollToEnd();
    },
    setHumanButton(shown) {
      human.hidden = !shown;
    },
    offerHandoff() {
      const offer = h('button', {
        class: 'sb-chip sb-handoff',
        text: 'Ask a person instead',
        attrs: { type: 'button' },
      });
      offer.addEventListener('click', () => {
        offer.remove();
        handlers.onEscalate();
      });
      messages.lastElementChild?.append(h('div', { class: 'sb-offer' }, [offer]));
      scrollToEnd();
    },
    setRating(createdAt, rating) {
      for (const element of messages.querySelectorAll<HTMLElement>('.sb-assistant')) {
        if (element.dataset.createdAt !== createdAt) continue;
        for (const button of element.querySelectorAll<HTMLButtonElement>('.sb-rate button')) {
          button.setAttribute('aria-pressed', String(button.classList.contains(`sb-rate-${rating}`)));
        }
      }
    },
    showTyping(agent) {
      hideTyping();
      typing.lastElementChild!.textContent = agent ? `${agent.name} is typing…` : '';
      typing.setAttribute('aria-label', agent ? `${agent.name} is typing…` : 'Typing…');
      typing.hidden = false;
      typingTimer = setTimeout(hideTyping, TYPING_TIMEOUT_MS);
      scrollToEnd();
    },
    hideTyping,
    setNotice(text) {
      noticeLine.textContent = text;
    },
    notice: () => noticeLine.textContent ?? '',
    leadForm: {
      ...leadForm,
      show(intro) {
        // At the end of the transcript, where the visitor is reading.
        if (!leadForm.element.isConnected || leadForm.element.hidden) messages.append(leadForm.element);
        leadForm.show(intro);
        scrollToEnd();
      },
    },
  };
  // The (hidden) form is in the transcript from the start; shown, it moves to its end.
  messages.append(leadForm.element);
  view.replaceTranscript([]);
  return view;
}
