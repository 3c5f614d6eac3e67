import { load } from 'cheerio';
import { marked } from 'marked';
import { collapseWhitespace, sectionsFromHtml } from './html-sections.ts';
import { pageFromSections, type ParsedDocument } from './parsed-document.ts';
import { baseTitle, decodeText } from './text-decoding.ts';

const FRONT_MATTER = /^---\n[\s\S]*?\n---\n/;

/**
 * Reads a Markdown file (CommonMark with GitHub extensions, rendered by marked): headings become the
 * sections' structure, and inline markup is reduced to its text. A leading YAML front-matter block
 * is skipped. The title is the first `#` heading, else the file name.
 */
export function parseMarkdown(filename: string, bytes: Uint8Array): ParsedDocument {
  const source = decodeText(bytes).replace(FRONT_MATTER, '');
  const html = marked.parse(source, { async: false, gfm: true });
  const $ = load(html);
  const sections = sectionsFromHtml($('body').get(0)!);
  const firstHeading = collapseWhitespace($('h1').first().text());
  return { title: firstHeading || baseTitle(filename), pages: [pageFromSections(sections)] };
}
