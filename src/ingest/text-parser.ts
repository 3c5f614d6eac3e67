import type { ParsedDocument } from './parsed-document.ts';
import { baseTitle, decodeText } from './text-decoding.ts';

/**
 * Reads a plain-text file: paragraphs are separated by blank lines, and line breaks inside a
 * paragraph are kept. The title is the file name.
 */
export function parseText(filename: string, bytes: Uint8Array): ParsedDocument {
  const blocks = decodeText(bytes)
    .split(/\n[ \t]*\n/)
    .map((block) =>
      block
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .join('\n'),
    )
    .filter((block) => block !== '');
  return { title: baseTitle(filename), pages: [{ text: blocks.join('\n\n'), sections: [{ headings: [], blocks }] }] };
}
