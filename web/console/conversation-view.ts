import type { ConversationSummary, Message } from './console-protocol.ts';
import { formatTime, h } from './dom.ts';

/** What the agent does in the open conversation. */
export interface ConversationHandlers {
  onTakeover: () => void;
  onRelease: () => void;
  onReply: (content: string) => void;
}

/** Everything the pane shows around the transcript. */
export interface PaneState {
  summary: ConversationSummary;
  /** This agent holds the conversation. */
  mine: boolean;
  /** A command for this conversation awaits its answer. */
  busy: boolean;
  /** The last command's outcome. */
  status: string;
}

/** The right column: the open conversation. */
export interface ConversationView {
  element: HTMLElement;
  /** Shows a conversation's header, buttons, reply form and status; `null` shows the placeholder. */
  show(state: PaneState | null): void;
  /** Replaces the transcript; `note` (e.g. "Loading…") shows when there are no messages. */
  setMessages(messages: readonly Message[], note?: string): void;
  appendMessage(message: Message): void;
  draft(): string;
  setDraft(text: string): void;
}

const ROLE_LABELS: Record<Message['role'], string> = { user: 'Visitor', assistant: 'Bot', agent: 'Agent' };

function messageElement(message: Message): HTMLDivElement {
  // The text is the element's only content, so its textContent is exactly the message; who and when are attributes.
  return h('div', {
    class: `sc-msg sc-${message.role}`,
    text: message.content,
    attrs: { 'data-role': ROLE_LABELS[message.role], title: formatTime(message.created_at) },
  });
}

/** The reply form: Enter sends, Shift+Enter starts a new line. */
function replyForm(onReply: (content: string) => void): {
  form: HTMLFormElement;
  input: HTMLTextAreaElement;
  send: HTMLButtonElement;
} {
  const input = h('textarea', { attrs: { name: 'content', rows: '3', 'aria-label': 'Reply' } });
  const send = h('button', { text: 'Send', attrs: { type: 'submit' } });
  const form = h('form', { class: 'sc-reply' }, [input, send]);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (content && !send.disabled) onReply(content);
  });
  input.addEventListener('keydown', (event) => {
    // isComposing: Enter also confirms an IME candidate, which must not send.
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    form.requestSubmit();
  });
  return { form, input, send };
}

function button(className: string, text: string, onClick: () => void): HTMLButtonElement {
  const element = h('button', { class: className, text, attrs: { type: 'button' } });
  element.addEventListener('click', onClick);
  return element;
}

/** The header's text: session id, source, chatbot, and the escalated and held flags. */
function headerDetails(summary: ConversationSummary, mine: boolean): HTMLElement[] {
  const flags: HTMLElement[] = [];
  if (summary.escalated_at) {
    flags.push(
      h('span', { class: 'sc-conversation-escalated', text: `Escalated ${formatTime(summary.escalated_at)}` }),
    );
  }
  if (summary.taken_over_by) {
    const who = mine ? `you (${summary.taken_over_by})` : summary.taken_over_by;
    flags.push(h('span', { class: 'sc-conversation-holder', text: `Held by ${who}` }));
  }
  return [
    h('h2', { class: 'sc-conversation-session', text: summary.session_id }),
    h('span', { class: 'sc-conversation-source', text: summary.source || 'unknown' }),
    ...(summary.chatbot_name ? [h('span', { class: 'sc-conversation-bot', text: summary.chatbot_name })] : []),
    ...flags,
  ];
}

/** The header: details on the left, "Take over" when nobody holds the conversation, "Release" when this agent does. */
function conversationHeader(handlers: ConversationHandlers): { element: HTMLElement; show(state: PaneState): void } {
  const details = h('div', { class: 'sc-conversation-details' });
  const takeover = button('sc-takeover', 'Take over', handlers.onTakeover);
  const release = button('sc-release', 'Release', handlers.onRelease);
  const element = h('header', { class: 'sc-conversation-header' }, [
    details,
    h('div', { class: 'sc-actions' }, [takeover, release]),
  ]);
  return {
    element,
    show(state) {
      details.replaceChildren(...headerDetails(state.summary, state.mine));
      takeover.hidden = state.summary.taken_over_by !== null;
      release.hidden = !state.mine;
      takeover.disabled = release.disabled = state.busy;
    },
  };
}

/** Builds the (empty) pane. */
export function createConversationView(handlers: ConversationHandlers): ConversationView {
  const header = conversationHeader(handlers);
  const transcript = h('div', { class: 'sc-transcript', attrs: { role: 'log', 'aria-live': 'polite' } });
  const status = h('div', { class: 'sc-status', attrs: { role: 'status' } });
  const { form, input, send } = replyForm(handlers.onReply);
  const conversation = h('div', { class: 'sc-conversation', attrs: { hidden: '' } }, [
    header.element,
    transcript,
    status,
    form,
  ]);
  const placeholder = h('p', { class: 'sc-placeholder', text: 'Pick a conversation on the left.' });
  const atEnd = (): boolean => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  return {
    element: h('section', { class: 'sc-pane' }, [placeholder, conversation]),
    show(state) {
      conversation.hidden = state === null;
      placeholder.hidden = state !== null;
      if (!state) return;
      const holder = state.summary.taken_over_by;
      header.show(state);
      input.disabled = !state.mine;
      // A reply on its way is cleared when the server accepts it, so nothing may be added to it meanwhile.
      input.readOnly = state.busy;
      input.placeholder = state.mine ? 'Write a reply…' : holder ? `Held by ${holder}` : 'Take over to reply';
      send.disabled = !state.mine || state.busy;
      status.textContent = state.status;
    },
    setMessages(messages, note = 'No messages yet.') {
      const empty = messages.length === 0 ? [h('p', { class: 'sc-transcript-note', text: note })] : [];
      transcript.replaceChildren(...empty, ...messages.map(messageElement));
      transcript.scrollTop = transcript.scrollHeight;
    },
    appendMessage(message) {
      // An agent reading older messages is not pulled down; one at the end follows the conversation.
      const follow = atEnd();
      transcript.querySelector('.sc-transcript-note')?.remove();
      transcript.append(messageElement(message));
      if (follow) transcript.scrollTop = transcript.scrollHeight;
    },
    draft: () => input.value,
    setDraft(text) {
      input.value = text;
    },
  };
}
