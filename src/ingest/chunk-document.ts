import type { UnembeddedChunk } from '../rag/chunk.ts';
import type { ParsedDocument, ParsedPage, Section } from './parsed-document.ts';
import { firstWords, lastWords, splitToFit } from './text-splitter.ts';
import { estimateTokens } from './token-estimate.ts';

/** Where the chunks come from and how they are labelled. */
export interface ChunkMetadata {
  chatbotId: string;
  sourceId: string;
  url: string;
  /** Defaults to the document's own title. */
  title?: string;
}

/** Chunk size budget, in estimated tokens (see `estimateTokens`). */
export interface ChunkSizes {
  /** A chunk closes before it would pass this size. */
  targetTokens: number;
  /** No chunk, heading lines included, is larger. */
  maxTokens: number;
  /** Text repeated from the end of the previous chunk when a section is split. */
  overlapTokens: number;
  /** A chunk at least this large closes at a heading rather than run into the next section. */
  minTokens: number;
}

/** About 300 tokens a chunk, never over 400, 50 tokens of overlap, sections merged below 100. */
export const DEFAULT_CHUNK_SIZES: ChunkSizes = { targetTokens: 300, maxTokens: 400, overlapTokens: 50, minTokens: 100 };

interface Piece {
  headings: string[];
  text: string;
}

interface Draft {
  /** The heading trail of each run of pieces, and the pieces' texts. */
  runs: Array<{ headings: string[]; texts: string[] }>;
}

/**
 * Splits a document into chunks on semantic boundaries. Blocks (paragraphs, list items, rows) are
 * packed in order up to `targetTokens`; a chunk closes at a change of heading once it holds
 * `minTokens`; a block too large for one chunk is split at sentence ends, never inside a word. Each
 * chunk starts with its heading trail (`Guide > Install`) as context, and a chunk that continues the
 * previous one's section repeats that chunk's last `overlapTokens` worth of words. Ids are
 * `<sourceId>:<position>`, positions counting from 0.
 */
export function chunkDocument(
  doc: ParsedDocument,
  meta: ChunkMetadata,
  sizes: Partial<ChunkSizes> = {},
): UnembeddedChunk[] {
  const budget = validSizes({ ...DEFAULT_CHUNK_SIZES, ...sizes });
  const title = meta.title ?? doc.title;
  return packPieces(piecesOf(doc, budget), budget).map((content, position) => ({
    id: `${meta.sourceId}:${position}`,
    chatbotId: meta.chatbotId,
    sourceId: meta.sourceId,
    position,
    title,
    url: meta.url,
    content,
  }));
}

function validSizes(sizes: ChunkSizes): ChunkSizes {
  const { targetTokens, maxTokens, overlapTokens, minTokens } = sizes;
  if (!(overlapTokens >= 0 && overlapTokens < targetTokens && targetTokens <= maxTokens)) {
    throw new RangeError(`chunk sizes need 0 <= overlap < target <= max, got ${JSON.stringify(sizes)}`);
  }
  if (!(minTokens >= 0 && minTokens <= targetTokens)) {
    throw new RangeError(`chunk sizes need 0 <= min <= target, got ${JSON.stringify(sizes)}`);
  }
  return sizes;
}

function piecesOf(doc: ParsedDocument, budget: ChunkSizes): Piece[] {
  // A piece plus the overlap fits the target; the heading lines get the room between target and max.
  const pieceTokens = budget.targetTokens - budget.overlapTokens;
  const headingTokens = budget.maxTokens - budget.targetTokens;
  return doc.pages.flatMap(sectionsOf).flatMap((section) => {
    const headings = clipHeadings(section.headings, headingTokens);
    return section.blocks.flatMap((block) => splitToFit(block.trim(), pieceTokens).map((text) => ({ headings, text })));
  });
}

function sectionsOf(page: ParsedPage): Section[] {
  if (page.sections) return page.sections;
  return [{ headings: [], blocks: page.text.split(/\n\s*\n/).filter((block) => block.trim() !== '') }];
}

function clipHeadings(headings: string[], maxTokens: number): string[] {
  if (estimateTokens(headingLine(headings)) <= maxTokens) return headings;
  return [firstWords(headingLine(headings), maxTokens)];
}

function packPieces(pieces: Piece[], budget: ChunkSizes): string[] {
  const chunks: string[] = [];
  let draft: Draft | null = null;
  for (const piece of pieces) {
    if (draft && closesBefore(draft, piece, budget)) {
      chunks.push(render(draft));
      draft = continuation(draft, piece, budget.overlapTokens);
    }
    draft ??= { runs: [] };
    append(draft, piece);
  }
  if (draft) chunks.push(render(draft));
  return chunks;
}

function closesBefore(draft: Draft, piece: Piece, budget: ChunkSizes): boolean {
  const last = draft.runs.at(-1)!;
  const newSection = !sameHeadings(last.headings, piece.headings);
  if (newSection && estimateTokens(render(draft)) >= budget.minTokens) return true;
  const grown = structuredClone(draft);
  append(grown, piece);
  return estimateTokens(render(grown)) > budget.targetTokens;
}

/** The next draft: seeded with the previous chunk's closing words when the section goes on. */
function continuation(previous: Draft, next: Piece, overlapTokens: number): Draft {
  const last = previous.runs.at(-1)!;
  if (!sameHeadings(last.headings, next.headings)) return { runs: [] };
  const overlap = lastWords(last.texts.join(' '), overlapTokens);
  return { runs: overlap ? [{ headings: last.headings, texts: [overlap] }] : [] };
}

function append(draft: Draft, piece: Piece): void {
  const last = draft.runs.at(-1);
  if (last && sameHeadings(last.headings, piece.headings)) last.texts.push(piece.text);
  else draft.runs.push({ headings: piece.headings, texts: [piece.text] });
}

function render(draft: Draft): string {
  return draft.runs
    .flatMap((run) => (run.headings.length > 0 ? [headingLine(run.headings), ...run.texts] : run.texts))
    .join('\n\n');
}

function headingLine(headings: string[]): string {
  return headings.join(' > ');
}

function sameHeadings(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((heading, index) => heading === b[index]);
}
