import type { ConversationRef, ConversationSummary } from './console-protocol.ts';
import { conversationKey } from './conversation-list.ts';
import { formatTime, h } from './dom.ts';
import { channelName, visitorLabel } from './visitor-label.ts';

/** The left column: one `li.sc-item` per conversation. */
export interface ConversationListView {
  element: HTMLElement;
  /**
   * Shows `items` in this order, marking the open one, each with its unread count; `isMine` tells
   * which holder is this agent.
   */
  render(
    items: readonly ConversationSummary[],
    openKey: string | null,
    isMine: (holder: string) => boolean,
    unread: (item: ConversationSummary) => number,
  ): void;
}

function preview(item: ConversationSummary): string {
  if (!item.last_message) return 'No messages yet';
  const who = item.last_message.role === 'user' ? '' : item.last_message.role === 'agent' ? 'Agent: ' : 'Bot: ';
  return `${who}${item.last_message.content}`;
}

/** The item's inner elements, rebuilt on every render (its `li` is kept, so focus and scroll stay). */
function itemContent(item: ConversationSummary, isMine: (holder: string) => boolean, unread: number): HTMLElement[] {
  const badges: HTMLElement[] = [];
  const count =
    unread > 0
      ? [h('span', { class: 'sc-unread', text: String(unread), attrs: { 'aria-label': `${unread} unread` } })]
      : [];
  if (item.escalated_at) badges.push(h('span', { class: 'sc-escalated', text: 'Escalated' }));
  if (item.taken_over_by) {
    const mine = isMine(item.taken_over_by) ? ' sc-held-mine' : '';
    badges.push(h('span', { class: `sc-held${mine}`, text: `Held by ${item.taken_over_by}` }));
  }
  const time = item.last_activity_at
    ? [
        h('time', {
          class: 'sc-time',
          text: formatTime(item.last_activity_at),
          attrs: { datetime: item.last_activity_at },
        }),
      ]
    : [];
  return [
    h('div', { class: 'sc-item-head' }, [
      h('span', { class: 'sc-visitor', text: visitorLabel(item) }),
      ...count,
      ...time,
    ]),
    h('div', { class: 'sc-item-meta' }, [
      h('span', { class: 'sc-source', text: channelName(item) }),
      ...(item.chatbot_name ? [h('span', { class: 'sc-bot', text: item.chatbot_name })] : []),
    ]),
    h('div', { class: 'sc-preview', text: preview(item) }),
    ...(badges.length ? [h('div', { class: 'sc-badges' }, badges)] : []),
  ];
}

function newItem(conversation: ConversationRef, onOpen: (conversation: ConversationRef) => void): HTMLLIElement {
  const ref = { chatbot_id: conversation.chatbot_id, session_id: conversation.session_id };
  const li = h('li', {
    class: 'sc-item',
    attrs: {
      'data-chatbot-id': ref.chatbot_id,
      'data-session-id': ref.session_id,
      title: ref.session_id,
      tabindex: '0',
      role: 'button',
    },
  });
  li.addEventListener('click', () => onOpen(ref));
  li.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    event.preventDefault();
    onOpen(ref);
  });
  return li;
}

/** Builds the list; `onOpen` runs when the agent picks a conversation (click, Enter or Space). */
export function createConversationListView(onOpen: (conversation: ConversationRef) => void): ConversationListView {
  const list = h('ul', { class: 'sc-list', attrs: { 'aria-label': 'Conversations' } });
  const empty = h('p', { class: 'sc-list-empty', text: 'No conversations yet.' });
  const element = h('nav', { class: 'sc-sidebar' }, [list, empty]);
  const rendered = new Map<string, HTMLLIElement>();

  const render: ConversationListView['render'] = (items, openKey, isMine, unread) => {
    const keep = new Set(items.map(conversationKey));
    for (const [key, li] of rendered) {
      if (keep.has(key)) continue;
      li.remove();
      rendered.delete(key);
    }
    items.forEach((item, index) => {
      const key = conversationKey(item);
      let li = rendered.get(key);
      if (!li) rendered.set(key, (li = newItem(item, onOpen)));
      li.replaceChildren(...itemContent(item, isMine, unread(item)));
      li.classList.toggle('sc-selected', key === openKey);
      if (key === openKey) li.setAttribute('aria-current', 'true');
      else li.removeAttribute('aria-current');
      // Only items out of place move, so a focused item stays focused unless its own position changes.
      const there = list.children[index];
      if (there !== li) list.insertBefore(li, there ?? null);
    });
    empty.hidden = items.length > 0;
  };
  return { element, render };
}
