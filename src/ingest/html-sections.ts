import { hasChildren, isTag, isText, type AnyNode, type Element } from 'domhandler';
import type { Section } from './parsed-document.ts';

// Elements that end the running paragraph: their text becomes a block of its own.
const BLOCK_TAGS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'hr',
  'legend',
  'li',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'ul',
]);
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link']);
const HEADING = /^h([1-6])$/;
// Pathologically deep trees are cut off rather than allowed to exhaust the stack.
const MAX_DEPTH = 400;

/** Collapses runs of whitespace (including no-break spaces) to one space and trims. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The text of a node and its descendants, scripts and styles left out. */
export function textOf(node: AnyNode, depth = 0): string {
  if (isText(node)) return node.data;
  if (!hasChildren(node) || depth > MAX_DEPTH) return '';
  if (isTag(node) && SKIPPED_TAGS.has(node.name)) return '';
  return node.children.map((child) => textOf(child, depth + 1)).join('');
}

/**
 * Turns an HTML subtree into sections: every `h1`–`h6` opens a section whose heading trail is the
 * nearest heading of each higher level; paragraphs, list items, table rows (cells joined by ` | `)
 * and preformatted blocks become blocks. Inline markup is flattened to text.
 */
export function sectionsFromHtml(root: AnyNode): Section[] {
  const walker = new SectionWalker();
  walker.visit(root, 0);
  return walker.finish();
}

class SectionWalker {
  private readonly sections: Section[] = [];
  private trail: string[] = [];
  private current: Section = { headings: [], blocks: [] };
  private buffer: string[] = [];

  visit(node: AnyNode, depth: number): void {
    if (depth > MAX_DEPTH) return;
    if (isText(node)) {
      this.buffer.push(node.data);
      return;
    }
    if (!isTag(node)) {
      if (hasChildren(node)) for (const child of node.children) this.visit(child, depth + 1);
      return;
    }
    this.visitElement(node, depth);
  }

  finish(): Section[] {
    this.flush();
    this.openSection(this.trail);
    return this.sections;
  }

  private visitElement(element: Element, depth: number): void {
    const name = element.name.toLowerCase();
    const heading = HEADING.exec(name);
    if (SKIPPED_TAGS.has(name)) return;
    if (name === 'br') this.buffer.push(' ');
    else if (heading) this.heading(Number(heading[1]), collapseWhitespace(textOf(element)));
    else if (name === 'pre') this.block(textOf(element).replace(/^\n+|\s+$/g, ''));
    else if (name === 'tr') this.block(tableRow(element));
    else if (BLOCK_TAGS.has(name)) {
      this.flush();
      for (const child of element.children) this.visit(child, depth + 1);
      this.flush();
    } else {
      for (const child of element.children) this.visit(child, depth + 1);
    }
  }

  private heading(level: number, text: string): void {
    this.flush();
    if (!text) return;
    const trail = this.trail.slice(0, level - 1);
    trail[level - 1] = text;
    this.openSection(trail);
  }

  private openSection(trail: string[]): void {
    if (this.current.blocks.length > 0) this.sections.push(this.current);
    this.trail = trail;
    this.current = { headings: trail.filter((heading) => heading !== undefined), blocks: [] };
  }

  private block(text: string): void {
    this.flush();
    if (text.trim()) this.current.blocks.push(text);
  }

  private flush(): void {
    const text = collapseWhitespace(this.buffer.join(''));
    this.buffer = [];
    if (text) this.current.blocks.push(text);
  }
}

function tableRow(row: Element): string {
  return row.children
    .filter((cell): cell is Element => isTag(cell) && (cell.name === 'td' || cell.name === 'th'))
    .map((cell) => collapseWhitespace(textOf(cell)))
    .filter((text) => text !== '')
    .join(' | ');
}
