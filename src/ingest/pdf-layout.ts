import { collapseWhitespace } from './html-sections.ts';
import type { Section } from './parsed-document.ts';

/** A positioned run of text on a PDF page, as pdf.js reports it (y grows upwards). */
export interface PdfTextItem {
  str: string;
  x: number;
  y: number;
  width: number;
  fontSize: number;
  hasEOL: boolean;
}

interface Line {
  text: string;
  y: number;
  size: number;
}

// A line this much larger than the body text, and this short, reads as a heading.
const HEADING_SCALE = 1.15;
const HEADING_MAX_WORDS = 15;
// A vertical gap over this many line heights starts a new paragraph.
const PARAGRAPH_GAP = 1.6;
// Running headers and footers are looked for in documents of at least this many pages.
const RUNNING_CHROME_MIN_PAGES = 3;

/**
 * Recovers structure from PDF text items, which carry no markup: items on one baseline form a
 * line; a line set noticeably larger than the document's body size is a heading (its level by size
 * rank); a wide vertical gap or a jump upwards (a new column) separates paragraphs. Running
 * headers and footers (the same line, page numbers aside, at the top or bottom of most pages) are
 * dropped. The heading trail carries over from page to page. Returns each page's sections.
 */
export function layoutPages(pages: PdfTextItem[][]): Section[][] {
  const lines = withoutRunningChrome(pages.map(pageLines));
  const body = bodySize(lines.flat());
  const headingSizes = [...new Set(lines.flat().flatMap((line) => (isHeading(line, body) ? [line.size] : [])))].sort(
    (a, b) => b - a,
  );
  let trail: string[] = [];
  return lines.map((pageLines) => {
    const sections: Section[] = [{ headings: trail, blocks: [] }];
    let paragraph: Line[] = [];
    const flush = () => {
      if (paragraph.length > 0) sections.at(-1)!.blocks.push(joinLines(paragraph));
      paragraph = [];
    };
    for (const line of pageLines) {
      if (isHeading(line, body)) {
        flush();
        const level = headingSizes.indexOf(line.size);
        trail = [...trail.slice(0, level), line.text];
        sections.push({ headings: trail, blocks: [] });
      } else {
        if (startsParagraph(paragraph.at(-1), line)) flush();
        paragraph.push(line);
      }
    }
    flush();
    return sections.filter((section) => section.blocks.length > 0);
  });
}

function pageLines(items: PdfTextItem[]): Line[] {
  const groups: PdfTextItem[][] = [];
  let lineBroken = true;
  for (const item of items) {
    // Whitespace-only items are dropped: toLine puts spaces back from the gaps between items.
    if (item.str.trim() !== '') {
      const group = groups.at(-1);
      const last = group?.at(-1);
      if (!lineBroken && group && last && Math.abs(last.y - item.y) <= item.fontSize * 0.5) group.push(item);
      else groups.push([item]);
      lineBroken = false;
    }
    if (item.hasEOL) lineBroken = true;
  }
  return groups.map(toLine).filter((line) => line.text !== '');
}

function toLine(parts: PdfTextItem[]): Line {
  let text = '';
  parts.forEach((part, index) => {
    const previous = parts[index - 1];
    // Words set as separate items carry no space between them; a visible gap means there was one.
    const gap = previous ? part.x - (previous.x + previous.width) : 0;
    if (previous && gap > part.fontSize * 0.15 && !/\s$/.test(text) && !/^\s/.test(part.str)) text += ' ';
    text += part.str;
  });
  return {
    text: collapseWhitespace(text),
    y: parts[0]?.y ?? 0,
    size: Math.max(...parts.map((part) => round(part.fontSize))),
  };
}

function withoutRunningChrome(pages: Line[][]): Line[][] {
  if (pages.length < RUNNING_CHROME_MIN_PAGES) return pages;
  const key = (line: Line) => line.text.replace(/\d+/g, '#');
  const edges = (lines: Line[]) => new Set([...lines.slice(0, 2), ...lines.slice(-2)].map(key));
  const counts = new Map<string, number>();
  for (const page of pages) for (const edge of edges(page)) counts.set(edge, (counts.get(edge) ?? 0) + 1);
  const running = new Set([...counts].filter(([, count]) => count > pages.length / 2).map(([text]) => text));
  return pages.map((lines) => {
    const edge = edges(lines);
    return lines.filter((line) => !(edge.has(key(line)) && running.has(key(line))));
  });
}

function bodySize(lines: Line[]): number {
  const weight = new Map<number, number>();
  for (const line of lines) weight.set(line.size, (weight.get(line.size) ?? 0) + line.text.length);
  return [...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
}

function isHeading(line: Line, body: number): boolean {
  const words = line.text.split(' ').length;
  return line.size >= body * HEADING_SCALE && words <= HEADING_MAX_WORDS && /\p{L}/u.test(line.text);
}

function startsParagraph(previous: Line | undefined, line: Line): boolean {
  if (!previous) return false;
  const gap = previous.y - line.y;
  return gap < 0 || gap > PARAGRAPH_GAP * Math.max(previous.size, line.size);
}

function joinLines(lines: Line[]): string {
  // A word hyphenated across a line break is joined back together.
  return lines
    .map((line) => line.text)
    .reduce((text, next) =>
      /\p{L}-$/u.test(text) && /^\p{Ll}/u.test(next) ? text.slice(0, -1) + next : `${text} ${next}`,
    );
}

function round(size: number): number {
  return Math.round(size * 2) / 2;
}
