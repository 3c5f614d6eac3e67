import type { CannedReply, ConversationSummary, Message } from './console-protocol.ts';
import { formatTime, h } from './dom.ts';
import { createReplyForm } from './reply-form.ts';
import { channelName, visitorContact, visitorLabel } from './visitor-label.ts';

/** What the agent does in the open conversation. */
export interface ConversationHandlers {
  onTakeover: () => void;
  onRelease: () => void;
  onReply: (content: string) => void;
  /** The agent is writing in the reply box. */
  onTyping: () => void;
  onSuggest: () => void;
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
  /** A suggestion for this conversation is being written. */
  suggesting: boolean;
}

/** The right column: the open conversation. */
export interface ConversationView {
  element: HTMLElement;
  /** Shows a conversation's header, buttons, reply form and status; `null` shows the placeholder. */
  show(state: PaneState | null): void;
  /** Replaces the transcript; `note` (e.g. "Loading…") shows when there are no messages. */
  setMessages(messages: readonly Message[], note?: string): void;
  /** Adds a message; a streamed reply takes the place of what its stream showed. */
  appendMessage(message: Message, streamId?: string): void;
  /** The next piece of a reply being written (the first one starts it). */
  appendDelta(streamId: string, text: string): void;
  /** A reply being written will not come: what was shown of it goes. */
  dropStream(streamId: string): void;
  draft(): string;
  setDraft(text: string): void;
  setCannedReplies(replies: readonly CannedReply[]): void;
  /** A suggestion arrived for the open conversation: into an empty draft, or offered beside a typed one. */
  offerSuggestion(text: string): 'placed' | 'asked';
  /** The suggestion offered beside the draft and not yet taken or declined. */
  pendingOffer(): string | null;
}

const ROLE_LABELS: Record<Message['role'], string> = { user: 'Visitor', assistant: 'Bot', agent: 'Agent' };

const RATINGS: Record<NonNullable<Message['feedback']>, string> = {
  up: 'The visitor found this helpful',
  down: 'The visitor found this not helpful',
};

/**
 * A message, with the sources an AI reply cites and the visitor's rating of it under it. The text is
 * the `.sc-msg` element's only content, so its textContent is exactly the message; who and when are
 * attributes.
 */
function messageElement(message: Message): HTMLDivElement {
  const text = h('div', {
    class: `sc-msg sc-${message.role}`,
    text: message.content,
    attrs: { 'data-role': message.agent?.name ?? ROLE_LABELS[message.role], title: formatTime(message.created_at) },
  });
  const sources = (message.citations ?? []).map((citation, i) => {
    const label = `[${i + 1}] ${citation.title}`;
    return citation.url
      ? h('a', {
          class: 'sc-source',
          text: label,
          attrs: { href: citation.url, target: '_blank', rel: 'noopener noreferrer' },
        })
      : h('span', { class: 'sc-source', text: label });
  });
  const extras = [
    ...(sources.length > 0 ? [h('div', { class: 'sc-sources', attrs: { 'aria-label': 'Sources' } }, sources)] : []),
    ...(message.feedback
      ? [h('div', { class: `sc-rating sc-rating-${message.feedback}`, text: RATINGS[message.feedback] })]
      : []),
  ];
  return h('div', { class: `sc-entry sc-entry-${message.role}` }, [text, ...extras]);
}

/** A reply being written: its text grows with each piece. */
function streamingElement(streamId: string): HTMLDivElement {
  const text = h('div', { class: 'sc-msg sc-assistant sc-streaming', attrs: { 'data-role': ROLE_LABELS.assistant } });
  const entry = h('div', { class: 'sc-entry sc-entry-assistant', attrs: { 'aria-busy': 'true' } }, [text]);
  entry.dataset.stream = streamId;
  return entry;
}

function button(className: string, text: string, onClick: () => void): HTMLButtonElement {
  const element = h('button', { class: className, text, attrs: { type: 'button' } });
  element.addEventListener('click', onClick);
  return element;
}

/** The header's text: who the visitor is, channel, chatbot, last activity, session id, and the flags. */
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
  const contact = visitorContact(summary);
  const time = summary.last_activity_at;
  return [
    h('h2', { class: 'sc-conversation-visitor', text: visitorLabel(summary) }),
    ...(contact ? [h('span', { class: 'sc-conversation-contact', text: contact })] : []),
    h('span', { class: 'sc-conversation-source', text: channelName(summary) }),
    ...(summary.chatbot_name ? [h('span', { class: 'sc-conversation-bot', text: summary.chatbot_name })] : []),
    ...(time
      ? [
          h('time', {
            class: 'sc-conversation-time',
            text: `Last activity ${formatTime(time)}`,
            attrs: { datetime: time },
          }),
        ]
      : []),
    h('span', { class: 'sc-conversation-session', text: summary.session_id }),
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
  const reply = createReplyForm(handlers);
  const conversation = h('div', { class: 'sc-conversation', attrs: { hidden: '' } }, [
    header.element,
    transcript,
    status,
    reply.element,
  ]);
  const placeholder = h('p', { class: 'sc-placeholder', text: 'Pick a conversation on the left.' });
  const atEnd = (): boolean => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  const streamed = (streamId: string): HTMLElement | undefined =>
    [...transcript.querySelectorAll<HTMLElement>('.sc-entry[data-stream]')].find(
      (entry) => entry.dataset.stream === streamId,
    );
  /** Adds an element at the end; an agent reading older messages is not pulled down, one at the end follows. */
  const add = (element: HTMLElement, replacing?: HTMLElement): void => {
    const follow = atEnd();
    transcript.querySelector('.sc-transcript-note')?.remove();
    if (replacing) replacing.replaceWith(element);
    else transcript.append(element);
    if (follow) transcript.scrollTop = transcript.scrollHeight;
  };
  return {
    element: h('section', { class: 'sc-pane' }, [placeholder, conversation]),
    show(state) {
      conversation.hidden = state === null;
      placeholder.hidden = state !== null;
      if (!state) return;
      header.show(state);
      reply.show({ ...state, holder: state.summary.taken_over_by });
      status.textContent = state.status;
    },
    setMessages(messages, note = 'No messages yet.') {
      const empty = messages.length === 0 ? [h('p', { class: 'sc-transcript-note', text: note })] : [];
      transcript.replaceChildren(...empty, ...messages.map(messageElement));
      transcript.scrollTop = transcript.scrollHeight;
    },
    appendMessage(message, streamId) {
      add(messageElement(message), streamId === undefined ? undefined : streamed(streamId));
    },
    appendDelta(streamId, text) {
      const entry = streamed(streamId);
      if (entry) {
        const follow = atEnd();
        entry.firstElementChild!.append(text);
        if (follow) transcript.scrollTop = transcript.scrollHeight;
        return;
      }
      const created = streamingElement(streamId);
      created.firstElementChild!.append(text);
      add(created);
    },
    dropStream(streamId) {
      streamed(streamId)?.remove();
    },
    draft: () => reply.draft(),
    setDraft: (text) => reply.setDraft(text),
    setCannedReplies: (replies) => reply.setCannedReplies(replies),
    offerSuggestion: (text) => reply.offerSuggestion(text),
    pendingOffer: () => reply.pendingOffer(),
  };
}
