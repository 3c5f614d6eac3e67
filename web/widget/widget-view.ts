import { h } from '../shared/dom.ts';
import { createLeadForm, type LeadForm } from './lead-form.ts';
import type { Cta, HistoryEntry, LeadFrame, Role, WidgetConfig } from './protocol.ts';
import { themeVariables, WIDGET_CSS } from './widget-styles.ts';

/** What the visitor does, for the controller to act on. */
export interface ViewHandlers {
  onSend: (text: string) => void;
  onEscalate: () => void;
  onCta: (cta: Cta) => void;
  onLead: (lead: LeadFrame) => void;
}

/** The widget's DOM, inside its shadow root. */
export interface WidgetView {
  /** Replaces every rendered message (the welcome message stays on top). */
  replaceTranscript(entries: readonly Pick<HistoryEntry, 'role' | 'content'>[]): void;
  appendMessage(role: Role, content: string): void;
  /** Shows the typing indicator for at most a minute. */
  showTyping(): void;
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

function messageElement(role: Role, content: string): HTMLDivElement {
  const author = role === 'agent' ? [h('span', { class: 'sb-author', text: 'Agent' })] : [];
  return h('div', { class: `sb-message sb-${role}` }, [...author, h('span', { class: 'sb-text', text: content })]);
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
  const dots = [h('span'), h('span'), h('span')];
  return h('div', { class: 'sb-typing', attrs: { hidden: '', role: 'status', 'aria-label': 'Typing…' } }, dots);
}

/** Opens and closes the panel from the bubble, the header's close button and Escape. */
function wireOpenClose(
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
  panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') close.click();
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
  const panel = h('div', { class: 'sb-panel', attrs: { hidden: '', role: 'dialog', 'aria-label': title } }, [
    header,
    messages,
    typing,
    actions,
    leadForm.element,
    noticeLine,
    composerElement,
  ]);
  const bubble = h('button', { class: 'sb-bubble', attrs: { type: 'button' } }, [chatIcon()]);
  wireOpenClose(panel, bubble, close, input);

  const rootElement = h('div', { class: 'sb-root' }, [panel, bubble]);
  for (const [name, value] of Object.entries(themeVariables(config.color))) rootElement.style.setProperty(name, value);
  root.append(h('style', { text: WIDGET_CSS }), rootElement);
  return viewApi(config.welcome_message, messages, typing, noticeLine, leadForm);
}

function viewApi(
  welcome: string,
  messages: HTMLDivElement,
  typing: HTMLDivElement,
  noticeLine: HTMLDivElement,
  leadForm: LeadForm,
): WidgetView {
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
      messages.replaceChildren(...greeting, ...entries.map((entry) => messageElement(entry.role, entry.content)));
      scrollToEnd();
    },
    appendMessage(role, content) {
      messages.append(messageElement(role, content));
      scrollToEnd();
    },
    showTyping() {
      hideTyping();
      typing.hidden = false;
      typingTimer = setTimeout(hideTyping, TYPING_TIMEOUT_MS);
      scrollToEnd();
    },
    hideTyping,
    setNotice(text) {
      noticeLine.textContent = text;
    },
    notice: () => noticeLine.textContent ?? '',
    leadForm,
  };
  view.replaceTranscript([]);
  return view;
}
