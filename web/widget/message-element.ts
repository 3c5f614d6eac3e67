import { h } from '../shared/dom.ts';
import { localTimeOfDay } from '../shared/local-time.ts';
import type { AgentPersona, Citation, HistoryEntry, Rating } from './protocol.ts';

/** Rates the reply written at `createdAt` (`null`: takes the rating back). */
export type OnRate = (createdAt: string, rating: Rating | null) => void;

const SVG_NS = 'http://www.w3.org/2000/svg';
const THUMB =
  'M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z';

function icon(path: string): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const shape = document.createElementNS(SVG_NS, 'path');
  shape.setAttribute('d', path);
  svg.append(shape);
  return svg;
}

/** A reply's text, its `[n]` markers shown as small source numbers (only those its citations name). */
function replyText(content: string, citations: readonly Citation[]): HTMLSpanElement {
  const text = h('span', { class: 'sb-text' });
  let at = 0;
  for (const marker of content.matchAll(/\[(\d{1,3})\]/g)) {
    const n = Number(marker[1]);
    if (n < 1 || n > citations.length) continue;
    // "days [1]." reads "days¹.": the space before a marker goes with it.
    text.append(
      content.slice(at, marker.index).replace(/[ \t]+$/, ''),
      h('sup', { class: 'sb-cite', text: String(n) }),
    );
    at = marker.index + marker[0].length;
  }
  text.append(content.slice(at));
  return text;
}

/** The numbered sources under a reply: a link where the source has one, its title otherwise. */
function sourceChips(citations: readonly Citation[]): HTMLElement[] {
  if (citations.length === 0) return [];
  const chips = citations.map((citation, i) => {
    const label = [h('span', { class: 'sb-source-n', text: String(i + 1) }), h('span', { text: citation.title })];
    return citation.url
      ? h(
          'a',
          { class: 'sb-source', attrs: { href: citation.url, target: '_blank', rel: 'noopener noreferrer' } },
          label,
        )
      : h('span', { class: 'sb-source' }, label);
  });
  return [h('div', { class: 'sb-sources', attrs: { role: 'list', 'aria-label': 'Sources' } }, chips)];
}

/** Thumbs up and down under a reply: one rating per reply; pressing the chosen one again takes it back. */
function ratingButtons(message: HistoryEntry, onRate: OnRate): HTMLDivElement {
  const button = (rating: Rating, label: string) => {
    const element = h(
      'button',
      {
        class: `sb-rate-${rating}`,
        attrs: { type: 'button', 'aria-label': label, 'aria-pressed': String(message.feedback === rating) },
      },
      [icon(THUMB)],
    );
    element.addEventListener('click', () =>
      onRate(message.created_at, element.getAttribute('aria-pressed') === 'true' ? null : rating),
    );
    return element;
  };
  return h('div', { class: 'sb-rate' }, [button('up', 'Helpful'), button('down', 'Not helpful')]);
}

/** Who wrote an agent's message: their avatar initial and name ("Agent" for one stored without them). */
function agentAuthor(agent: AgentPersona | undefined): HTMLSpanElement {
  if (!agent) return h('span', { class: 'sb-author', text: 'Agent' });
  return h('span', { class: 'sb-author' }, [
    h('span', { class: 'sb-avatar', text: agent.initial, attrs: { 'aria-hidden': 'true' } }),
    h('span', { class: 'sb-author-name', text: agent.name }),
  ]);
}

/**
 * One message of the transcript: an agent's with their name and initial, a reply with its text (its
 * `[n]` markers as small source numbers), its sources and the visitor's thumbs; each with its time.
 */
export function messageElement(message: HistoryEntry, onRate: OnRate): HTMLDivElement {
  const { role, content, created_at } = message;
  const author = role === 'agent' ? [agentAuthor(message.agent)] : [];
  const time = localTimeOfDay(created_at);
  const stamp = time ? [h('time', { class: 'sb-time', text: time.text, attrs: { datetime: time.datetime } })] : [];
  const reply = role === 'assistant';
  const citations = reply ? (message.citations ?? []) : [];
  const element = h('div', { class: `sb-message sb-${role}` }, [
    ...author,
    reply ? replyText(content, citations) : h('span', { class: 'sb-text', text: content }),
    ...sourceChips(citations),
    ...stamp,
    ...(reply && time ? [ratingButtons(message, onRate)] : []),
  ]);
  if (reply) element.dataset.createdAt = created_at;
  return element;
}
