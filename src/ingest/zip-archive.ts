import { unzipSync } from 'fflate';
import { ParseError, SizeLimitError } from './ingest-errors.ts';

/** The most that the entries of one DOCX or PPTX may declare, unpacked, before any is inflated. */
export const MAX_UNZIPPED_BYTES = 200 * 1024 * 1024;

/**
 * Reads the entries of a ZIP archive (the container of DOCX and PPTX) that `wanted` selects. The
 * sizes that all entries declare are added up first and the archive refused over `maxBytes`, so a
 * small file cannot inflate into gigabytes; fflate never writes past a declared size.
 */
export function readZipEntries(
  filename: string,
  bytes: Uint8Array,
  wanted: (name: string) => boolean,
  maxBytes = MAX_UNZIPPED_BYTES,
): Map<string, Uint8Array> {
  let total = 0;
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, {
      filter: (file) => {
        total += file.originalSize;
        if (total > maxBytes) throw new SizeLimitError(`${filename} unpacked`, maxBytes);
        return wanted(file.name);
      },
    });
  } catch (error) {
    if (error instanceof SizeLimitError) throw error;
    throw new ParseError(filename, 'not a valid Office Open XML (ZIP) file', { cause: error });
  }
  return new Map(Object.entries(files));
}
