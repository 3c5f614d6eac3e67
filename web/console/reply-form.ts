import { attachCannedReplyPicker } from './canned-reply-picker.ts';
import type { CannedReply } from './console-protocol.ts';
import { h } from './dom.ts';

/** What the agent does from the reply form. */
export interface ReplyHandlers {
  onReply: (content: string) => void;
  /** The agent is writing in the reply box. */
  onTyping: () => void;
  onSuggest: () => void;
}

/** How the form stands for the open conversation. */
export interface ReplyFormState {
  /** This agent holds the conversation (only then can it reply or ask for a suggestion). */
  mine: boolean;
  /** Who holds it, if anyone. */
  holder: string | null;
  /** A command for this conversation awaits its answer: the draft may not change meanwhile. */
  busy: boolean;
  /** A suggestion for this conversation is being written. */
  suggesting: boolean;
}

/** The reply form of the open conversation. */
export interface ReplyForm {
  element: HTMLFormElement;
  show(state: ReplyFormState): void;
  draft(): string;
  /** Replaces the draft (another conversation opened, a reply was sent); closes the list and the offer. */
  setDraft(text: string): void;
  setCannedReplies(replies: readonly CannedReply[]): void;
  /**
   * A suggestion arrived: it becomes the draft when the draft is empty (`placed`); otherwise the form
   * asks whether to replace the draft with it (`asked`). Nothing is sent either way.
   */
  offerSuggestion(text: string): 'placed' | 'asked';
  /** The suggestion the form is asking about, if any (to keep while another conversation is open). */
  pendingOffer(): string | null;
}

/** The question asked before a suggestion replaces a typed draft. */
function suggestionOffer(onUse: (text: string) => void) {
  const text = h('blockquote', { class: 'sc-suggestion-text' });
  const use = h('button', { class: 'sc-suggestion-use', text: 'Replace draft', attrs: { type: 'button' } });
  const keep = h('button', { class: 'sc-suggestion-keep', text: 'Keep my draft', attrs: { type: 'button' } });
  const element = h(
    'div',
    { class: 'sc-suggestion-offer', attrs: { role: 'group', 'aria-label': 'Suggested reply' } },
    [
      h('p', { class: 'sc-suggestion-question', text: 'A suggestion is ready. Replace your draft with it?' }),
      text,
      h('div', { class: 'sc-suggestion-actions' }, [use, keep]),
    ],
  );
  element.hidden = true;
  let offered: string | null = null;
  const hide = (): void => {
    offered = null;
    element.hidden = true;
  };
  use.addEventListener('click', () => {
    const chosen = offered;
    hide();
    if (chosen !== null) onUse(chosen);
  });
  keep.addEventListener('click', hide);
  return {
    element,
    ask(suggestion: string) {
      offered = suggestion;
      text.textContent = suggestion;
      element.hidden = false;
    },
    hide,
    pending: () => offered,
  };
}

/**
 * The reply form: the draft (Enter sends, Shift+Enter starts a new line; `/` at the start opens the
 * canned replies), "Suggest a reply" and Send.
 */
export function createReplyForm(handlers: ReplyHandlers): ReplyForm {
  const input = h('textarea', { attrs: { name: 'content', rows: '3', 'aria-label': 'Reply' } });
  // Before the form's own keydown listener: Enter picks a canned reply while the list is open.
  const picker = attachCannedReplyPicker(input);
  const suggest = h('button', { class: 'sc-suggest', text: 'Suggest a reply', attrs: { type: 'button' } });
  const send = h('button', { text: 'Send', attrs: { type: 'submit' } });
  const place = (text: string): void => {
    picker.close();
    input.value = text;
    input.focus();
    input.setSelectionRange(text.length, text.length);
  };
  const offer = suggestionOffer(place);
  const form = h('form', { class: 'sc-reply' }, [
    h('div', { class: 'sc-reply-box' }, [picker.element, offer.element, input]),
    h('div', { class: 'sc-reply-actions' }, [suggest, send]),
  ]);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (content && !send.disabled) handlers.onReply(content);
  });
  input.addEventListener('input', () => {
    if (input.value.trim()) handlers.onTyping();
  });
  input.addEventListener('keydown', (event) => {
    // isComposing: Enter also confirms an IME candidate, which must not send.
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    form.requestSubmit();
  });
  suggest.addEventListener('click', () => handlers.onSuggest());
  return {
    element: form,
    show(state) {
      input.disabled = !state.mine;
      // A reply on its way is cleared when the server accepts it, so nothing may be added to it meanwhile.
      input.readOnly = state.busy;
      input.placeholder = state.mine
        ? 'Write a reply… (type / for canned replies)'
        : state.holder
          ? `Held by ${state.holder}`
          : 'Take over to reply';
      send.disabled = !state.mine || state.busy;
      suggest.disabled = !state.mine || state.suggesting;
      suggest.textContent = state.suggesting ? 'Suggesting…' : 'Suggest a reply';
      suggest.title = state.mine ? 'Draft a reply with the chatbot; you edit it before sending' : 'Take over first';
      if (!state.mine) {
        picker.close();
        offer.hide();
      }
    },
    draft: () => input.value,
    setDraft(text) {
      picker.close();
      offer.hide();
      input.value = text;
    },
    setCannedReplies: (replies) => picker.setReplies(replies),
    offerSuggestion(text) {
      if (input.value.trim() === '') {
        offer.hide();
        place(text);
        return 'placed';
      }
      offer.ask(text);
      return 'asked';
    },
    pendingOffer: () => offer.pending(),
  };
}
