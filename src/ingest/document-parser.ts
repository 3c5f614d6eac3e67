import { SizeLimitError, UnsupportedFileError } from './ingest-errors.ts';
import type { ParsedDocument } from './parsed-document.ts';

/** The largest file `parseDocument` reads. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** An uploaded file: its name (the extension picks the parser) and its bytes. */
export interface DocumentFile {
  filename: string;
  bytes: Uint8Array;
}

type Parser = (filename: string, bytes: Uint8Array) => ParsedDocument | Promise<ParsedDocument>;

/**
 * Each format's parser, loaded when a file of it is first read: the libraries behind them (pdf.js,
 * mammoth, cheerio…) cost a process that never parses one (the CLI) a third of its start-up.
 */
const PARSERS: Record<string, () => Promise<Parser>> = {
  pdf: async () => (await import('./pdf-parser.ts')).parsePdf,
  docx: async () => (await import('./docx-parser.ts')).parseDocx,
  pptx: async () => (await import('./pptx-parser.ts')).parsePptx,
  txt: async () => (await import('./text-parser.ts')).parseText,
  md: async () => (await import('./markdown-parser.ts')).parseMarkdown,
  markdown: async () => (await import('./markdown-parser.ts')).parseMarkdown,
  csv: async () => (await import('./csv-parser.ts')).parseCsv,
  vtt: async () => (await import('./subtitle-parser.ts')).parseSubtitles,
  srt: async () => (await import('./subtitle-parser.ts')).parseSubtitles,
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
  const load = PARSERS[extension];
  if (!load) throw new UnsupportedFileError(file.filename);
  if (file.bytes.byteLength > maxBytes) throw new SizeLimitError(file.filename, maxBytes);
  return (await load())(file.filename, file.bytes);
}
