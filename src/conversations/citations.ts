import type { Citation } from '../contract/conversation.ts';
import type { RetrievedChunk } from '../rag/retriever.ts';

/**
 * What becomes of the model's `[n]` markers: `renumber` keeps the ones that name a reference of the
 * prompt, numbered 1, 2, … in the order the reply first uses them; `strip` removes every marker.
 */
export type CitationMode = 'renumber' | 'strip';

// A marker as models write it: `[1]`, `[2, 3]`, `[2,3]`. Text in brackets that is not only numbers
// (a link's `[label]`, `[sic]`) is left alone.
const MARKER = /\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\]/y;
// The longest text that may still become a marker: held back from a stream until it is decided.
const MAX_MARKER = 32;
const OPEN_MARKER = /^\[[\d\s,]*$/;

/**
 * Turns a model's reply into what visitors read, as it streams: `push` takes each piece of text and
 * returns what can be shown now; `end` returns the rest. Markers naming a reference the prompt did
 * not have are dropped, and in `strip` mode all of them, with the space before them, so "fast [1]."
 * reads "fast.". The whole output equals `apply` on the whole reply, however the text was split.
 */
export class CitationFilter {
  private readonly references: number;
  private readonly mode: CitationMode;
  /** Original reference numbers, in the order the reply first cited them. */
  private readonly order: number[] = [];
  /** Text not yet decided: an unfinished marker, or spaces that may precede one. */
  private pending = '';

  constructor(references: number, mode: CitationMode) {
    this.references = references;
    this.mode = mode;
  }

  /** The text of `piece` (with what was held back) that can be shown now. */
  push(piece: string): string {
    return this.drain(this.pending + piece, false);
  }

  /** What was held back, once the reply has ended. */
  end(): string {
    return this.drain(this.pending, true);
  }

  /** The references the reply cites, as the prompt numbered them, in the order of their new numbers. */
  cited(): number[] {
    return this.mode === 'renumber' ? [...this.order] : [];
  }

  private drain(text: string, final: boolean): string {
    let out = '';
    let i = 0;
    while (i < text.length) {
      const open = text.indexOf('[', i);
      if (open === -1) {
        out += text.slice(i);
        i = text.length;
        break;
      }
      MARKER.lastIndex = open;
      const match = MARKER.exec(text);
      if (!match) {
        const rest = text.slice(open);
        // Maybe a marker still arriving: hold it (and the spaces before it) for the next piece.
        if (!final && rest.length < MAX_MARKER && OPEN_MARKER.test(rest)) {
          const start = spacesBefore(text, open, i);
          out += text.slice(i, start);
          this.pending = text.slice(start);
          return out;
        }
        out += text.slice(i, open + 1);
        i = open + 1;
        continue;
      }
      const replacement = this.replace(match[0]);
      const start = replacement === '' ? spacesBefore(text, open, i) : open;
      out += text.slice(i, start) + replacement;
      i = open + match[0].length;
    }
    // Trailing spaces may be followed by a marker that will be dropped with them: held back.
    const kept = final ? text.length : spacesBefore(text, text.length, 0);
    if (kept < text.length && i === text.length) {
      this.pending = text.slice(kept);
      return out.slice(0, out.length - (text.length - kept));
    }
    this.pending = '';
    return out;
  }

  /** A marker's replacement: its valid references renumbered, or '' (dropped). */
  private replace(marker: string): string {
    if (this.mode === 'strip') return '';
    const numbers = marker.match(/\d+/g)!.map(Number);
    let replacement = '';
    for (const n of numbers) {
      if (n < 1 || n > this.references) continue;
      let position = this.order.indexOf(n);
      if (position === -1) position = this.order.push(n) - 1;
      replacement += `[${position + 1}]`;
    }
    return replacement;
  }
}

/** Where the run of spaces and tabs that ends at `end` starts (not before `floor`). */
function spacesBefore(text: string, end: number, floor: number): number {
  let start = end;
  while (start > floor && (text[start - 1] === ' ' || text[start - 1] === '\t')) start -= 1;
  return start;
}

/** `text` with its markers renumbered (or stripped), and the references it cites in their new order. */
export function applyCitations(
  text: string,
  references: number,
  mode: CitationMode,
): { text: string; cited: number[] } {
  const filter = new CitationFilter(references, mode);
  const out = filter.push(text) + filter.end();
  return { text: out, cited: filter.cited() };
}

/**
 * What a visitor may see of a cited passage: its title, and its link when it has one a person can
 * open (a page, a video, a connector's document). Text and file sources have no link, and nothing
 * else of them (their content, ids) leaves the gateway.
 */
export function citationOf(chunk: Pick<RetrievedChunk, 'title' | 'url'>): Citation {
  const url = /^https?:\/\//i.test(chunk.url) ? chunk.url : '';
  return url ? { title: chunk.title || url, url } : { title: chunk.title || 'Untitled source' };
}

/** The citations of a reply, in the order of its renumbered markers. */
export function citationsOf(context: Array<Pick<RetrievedChunk, 'title' | 'url'>>, cited: number[]): Citation[] {
  return cited.map((n) => citationOf(context[n - 1]!));
}

/**
 * The sources as plain text after a reply, for places that show no chips (Telegram, WhatsApp, the
 * REST API when the owner asks for citations there): "Sources:" and one `[n] title — link` line each.
 */
export function sourcesFooter(citations: readonly Citation[]): string {
  if (citations.length === 0) return '';
  const lines = citations.map((c, i) => `[${i + 1}] ${c.title}${c.url && c.url !== c.title ? ` — ${c.url}` : ''}`);
  return `\n\nSources:\n${lines.join('\n')}`;
}

/** A stored reply's markers, removed before it goes back into a prompt (they named another turn's references). */
export function withoutMarkers(text: string): string {
  return applyCitations(text, 0, 'strip').text;
}
