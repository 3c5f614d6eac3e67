import { parseCsv } from './csv-parser.ts';
import { parseDocx } from './docx-parser.ts';
import { SizeLimitError, UnsupportedFileError } from './ingest-errors.ts';
import { parseMarkdown } from './markdown-parser.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { parsePdf } from './pdf-parser.ts';
import { parsePptx } from './pptx-parser.ts';
import { parseSubtitles } from './subtitle-parser.ts';
import { parseText } from './text-parser.ts';

/** The largest file `parseDocument` reads. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** An uploaded file: its name (the extension picks the parser) and its bytes. */
export interface DocumentFile {
  filename: string;
  bytes: Uint8Array;
}

type Parser = (filename: string, bytes: Uint8Array) => ParsedDocument | Promise<ParsedDocument>;

const PARSERS: Record<string, Parser> = {
  pdf: parsePdf,
  docx: parseDocx,
  pptx: parsePptx,
  txt: parseText,
  md: parseMarkdown,
  markdown: parseMarkdown,
  csv: parseCsv,
  vtt: parseSubtitles,
  srt: parseSubtitles,
};

/**
 * Parses a PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT file, chosen by its extension (case-insensitive),
 * into a titled document of pages (PDF pages, PPTX slides; one page for the other formats) whose
 * sections keep the headings; subtitles become timestamped paragraphs. Throws `UnsupportedFileError`
 * for other extensions, `SizeLimitError` over `maxBytes` (default 20 MB), and `ParseError` for a file
 * its parser cannot read.
 */
export async function parseDocument(file: DocumentFile, maxBytes = MAX_FILE_BYTES): Promise<ParsedDocument> {
  const extension = /\.([^./\\]+)$/.exec(file.filename)?.[1]?.toLowerCase() ?? '';
  const parser = PARSERS[extension];
  if (!parser) throw new UnsupportedFileError(file.filename);
  if (file.bytes.byteLength > maxBytes) throw new SizeLimitError(file.filename, maxBytes);
  return parser(file.filename, file.bytes);
}
