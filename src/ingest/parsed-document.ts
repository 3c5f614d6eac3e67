/**
 * A run of blocks under one heading trail. `headings` is the trail from the outermost heading to the
 * nearest one (`['Guide', 'Installation']`), empty before the first heading; `blocks` are the
 * paragraphs, list items, table rows and the like, in reading order, as plain text.
 */
export interface Section {
  headings: string[];
  blocks: string[];
}

/** One page of a document: a PDF page, a PPTX slide, or the whole of a single-page file. */
export interface ParsedPage {
  /** The page's plain text, blocks separated by blank lines. */
  text: string;
  /** The page's structure; when absent, consumers split `text` on blank lines. */
  sections?: Section[];
}

/** What a parser or the HTML extractor makes of a file or a web page. */
export interface ParsedDocument {
  title: string;
  pages: ParsedPage[];
}

/** Builds a page whose `text` is its sections' headings and blocks, in order. */
export function pageFromSections(sections: Section[]): ParsedPage {
  const parts: string[] = [];
  for (const section of sections) {
    const heading = section.headings.at(-1);
    if (heading !== undefined && section.headings.length > 0) parts.push(heading);
    parts.push(...section.blocks);
  }
  return { text: parts.join('\n\n'), sections };
}
