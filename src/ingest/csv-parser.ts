import { parse } from 'csv-parse/sync';
import { ParseError } from './ingest-errors.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { baseTitle, decodeText } from './text-decoding.ts';

/**
 * Reads a CSV file whose first row names the columns: every further row becomes one block of
 * `header: value` lines (empty cells left out; a column without a name is `Column N`). Rows may be
 * shorter or longer than the header.
 */
export function parseCsv(filename: string, bytes: Uint8Array): ParsedDocument {
  let rows: string[][];
  try {
    rows = parse(decodeText(bytes), { relax_column_count: true, skip_empty_lines: true, trim: true });
  } catch (error) {
    throw new ParseError(filename, (error as Error).message, { cause: error });
  }
  const [header = [], ...records] = rows;
  const name = (index: number) => header[index] || `Column ${index + 1}`;
  const blocks = records
    .map((record) => record.flatMap((value, index) => (value === '' ? [] : [`${name(index)}: ${value}`])).join('\n'))
    .filter((block) => block !== '');
  return { title: baseTitle(filename), pages: [{ text: blocks.join('\n\n'), sections: [{ headings: [], blocks }] }] };
}
