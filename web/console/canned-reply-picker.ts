import { cannedQuery, matchCannedReplies } from './canned-reply-match.ts';
import type { CannedReply } from './console-protocol.ts';
import { h } from './dom.ts';

/** The canned-reply list of the reply box. */
export interface CannedReplyPicker {
  /** `ul.sc-canned`, placed just before the reply box (it shows above it). */
  element: HTMLElement;
  /** The owner's canned replies as read last (the list follows when it is open). */
  setReplies(replies: readonly CannedReply[]): void;
  /** Closes the list (the draft was replaced from outside, another conversation opened). */
  close(): void;
}

const NONE_YET = "No canned replies yet: the owner adds them on the dashboard's Canned replies page.";

/**
 * Attaches the canned-reply list to the reply box: a draft that is `/` and a word opens it, showing
 * the replies that word finds (src: canned-reply-match.ts); ↑ and ↓ move, Enter, Tab or a click put
 * the reply's text in the box in place of the `/word` (nothing is sent: the agent edits, then sends),
 * Escape closes it. Its keydown listener is registered here, so attach it before any other (the
 * form's Enter-sends), which then sees the keys it handled as `defaultPrevented`.
 */
export function attachCannedReplyPicker(input: HTMLTextAreaElement): CannedReplyPicker {
  const list = h('ul', {
    class: 'sc-canned',
    attrs: { id: 'sc-canned', role: 'listbox', 'aria-label': 'Canned replies' },
  });
  list.hidden = true;
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('aria-expanded', 'false');
  let replies: readonly CannedReply[] = [];
  let matches: CannedReply[] = [];
  let active = 0;
  let query: string | null = null;
  // The draft the agent closed the list on: it opens again once the draft changes.
  let dismissed: string | null = null;

  const close = (): void => {
    query = null;
    list.hidden = true;
    list.replaceChildren();
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  };

  const choose = (reply: CannedReply): void => {
    input.value = reply.text;
    close();
    input.focus();
    input.setSelectionRange(reply.text.length, reply.text.length);
  };

  const option = (reply: CannedReply, index: number): HTMLLIElement => {
    const item = h(
      'li',
      {
        class: index === active ? 'sc-canned-item sc-active' : 'sc-canned-item',
        attrs: {
          id: `sc-canned-${index}`,
          role: 'option',
          'aria-selected': String(index === active),
          'data-shortcut': reply.shortcut,
        },
      },
      [
        h('span', { class: 'sc-canned-shortcut', text: `/${reply.shortcut}` }),
        h('span', { class: 'sc-canned-text', text: reply.text }),
      ],
    );
    // Pressing the mouse would take the focus from the reply box and close the list before the click.
    item.addEventListener('mousedown', (event) => event.preventDefault());
    item.addEventListener('click', () => choose(reply));
    return item;
  };

  const render = (): void => {
    if (query === null) return;
    const empty = replies.length === 0 ? NONE_YET : `No canned reply matches /${query}.`;
    list.replaceChildren(
      ...(matches.length > 0
        ? matches.map(option)
        : [h('li', { class: 'sc-canned-empty', text: empty, attrs: { role: 'presentation' } })]),
    );
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    if (matches.length > 0) {
      input.setAttribute('aria-activedescendant', `sc-canned-${active}`);
      list.children[active]?.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };

  const update = (): void => {
    const next = cannedQuery(input.value);
    if (next === null || input.value === dismissed) return close();
    dismissed = null;
    if (next !== query) active = 0;
    query = next;
    matches = matchCannedReplies(replies, next);
    active = Math.min(active, Math.max(0, matches.length - 1));
    render();
  };

  input.addEventListener('input', update);
  input.addEventListener('focus', update);
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (event) => {
    if (query === null || event.isComposing) return;
    const handled = (): void => {
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      handled();
      if (matches.length === 0) return;
      active = (active + (event.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length;
      render();
    } else if ((event.key === 'Enter' && !event.shiftKey) || (event.key === 'Tab' && matches.length > 0)) {
      // With no match, Enter does nothing rather than send the `/word` to the visitor.
      handled();
      const chosen = matches[active];
      if (chosen) choose(chosen);
    } else if (event.key === 'Escape') {
      handled();
      dismissed = input.value;
      close();
    }
  });

  return {
    element: list,
    setReplies(next) {
      replies = next;
      if (query !== null) update();
    },
    close() {
      dismissed = null;
      close();
    },
  };
}
