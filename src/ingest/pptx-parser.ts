import { load, type CheerioAPI } from 'cheerio';
import { isTag, type AnyNode } from 'domhandler';
import { collapseWhitespace } from './html-sections.ts';
import { ParseError } from './ingest-errors.ts';
import { CORE_PROPERTIES, officeTitle } from './office-title.ts';
import { pageFromSections, type ParsedDocument, type ParsedPage } from './parsed-document.ts';
import { baseTitle } from './text-decoding.ts';
import { readZipEntries } from './zip-archive.ts';

const PRESENTATION = 'ppt/presentation.xml';
const PRESENTATION_RELS = 'ppt/_rels/presentation.xml.rels';
const SLIDE = /^ppt\/slides\/slide(\d+)\.xml$/;
const TITLE_SHAPE = 'p\\:sp:has(p\\:nvSpPr p\\:ph[type="title"], p\\:nvSpPr p\\:ph[type="ctrTitle"])';
// Slide numbers, dates, headers and footers repeat on every slide and say nothing.
const CHROME_SHAPE =
  'p\\:sp:has(p\\:nvSpPr p\\:ph[type="sldNum"], p\\:nvSpPr p\\:ph[type="dt"], p\\:nvSpPr p\\:ph[type="ftr"], p\\:nvSpPr p\\:ph[type="hdr"])';

/**
 * Reads a PPTX file: one page per slide, in the presentation's order. A slide's title placeholder
 * is its heading; its other text frames' paragraphs and its tables' rows (cells joined by ` | `) are
 * blocks. Speaker notes, slide numbers, dates and footers are left out. The title is the file's
 * `dc:title` property, else the first slide's title, else the file name.
 */
export function parsePptx(filename: string, bytes: Uint8Array): ParsedDocument {
  const entries = readZipEntries(
    filename,
    bytes,
    (name) => SLIDE.test(name) || name === PRESENTATION || name === PRESENTATION_RELS || name === CORE_PROPERTIES,
  );
  if (!entries.has(PRESENTATION)) throw new ParseError(filename, 'not a PowerPoint presentation');
  const pages = slideOrder(entries).map((name) => slidePage(xml(entries.get(name)!)));
  const firstSlideTitle = pages[0]?.sections?.[0]?.headings[0] ?? '';
  return { title: officeTitle(entries.get(CORE_PROPERTIES)) || firstSlideTitle || baseTitle(filename), pages };
}

function xml(bytes: Uint8Array): CheerioAPI {
  return load(new TextDecoder().decode(bytes), { xml: true });
}

/** Slide part names in show order: the presentation's slide list, else the slide files' numbers. */
function slideOrder(entries: Map<string, Uint8Array>): string[] {
  const rels = entries.get(PRESENTATION_RELS);
  if (rels) {
    const $rels = xml(rels);
    const targets = new Map(
      $rels('Relationship')
        .toArray()
        .map((rel) => [$rels(rel).attr('Id'), $rels(rel).attr('Target') ?? ''] as const),
    );
    const $ = xml(entries.get(PRESENTATION)!);
    const ordered = $('p\\:sldIdLst p\\:sldId')
      .toArray()
      .map((slide) => partName(targets.get($(slide).attr('r:id')) ?? ''))
      .filter((name) => entries.has(name));
    if (ordered.length > 0) return ordered;
  }
  const number = (name: string) => Number(SLIDE.exec(name)?.[1]);
  return [...entries.keys()].filter((name) => SLIDE.test(name)).sort((a, b) => number(a) - number(b));
}

function partName(target: string): string {
  return target.startsWith('/') ? target.slice(1) : `ppt/${target.replace(/^\.\//, '')}`;
}

function slidePage($: CheerioAPI): ParsedPage {
  const titleShape = $(TITLE_SHAPE).first();
  const title = collapseWhitespace(
    titleShape
      .find('a\\:p')
      .toArray()
      .map((p) => paragraphText($, p))
      .join(' '),
  );
  const skipped = new Set<AnyNode>([...titleShape.toArray(), ...$(CHROME_SHAPE).toArray()]);
  const blocks = $('a\\:p, a\\:tr')
    .toArray()
    .filter(
      (node) =>
        !$(node)
          .parents()
          .toArray()
          .some((parent) => skipped.has(parent)),
    )
    .filter((node) => !(isParagraph(node) && $(node).parents('a\\:tbl').length > 0))
    .map((node) => (isParagraph(node) ? collapseWhitespace(paragraphText($, node)) : rowText($, node)))
    .filter((text) => text !== '');
  return pageFromSections(blocks.length > 0 || title ? [{ headings: title ? [title] : [], blocks }] : []);
}

function isParagraph(node: AnyNode): boolean {
  return isTag(node) && node.name === 'a:p';
}

function paragraphText($: CheerioAPI, paragraph: AnyNode): string {
  return $(paragraph)
    .find('a\\:t, a\\:br')
    .toArray()
    .map((node) => (isTag(node) && node.name === 'a:br' ? ' ' : $(node).text()))
    .join('');
}

function rowText($: CheerioAPI, row: AnyNode): string {
  return $(row)
    .find('a\\:tc')
    .toArray()
    .map((cell) =>
      collapseWhitespace(
        $(cell)
          .find('a\\:p')
          .toArray()
          .map((p) => paragraphText($, p))
          .join(' '),
      ),
    )
    .filter((text) => text !== '')
    .join(' | ');
}
