import { plural } from '../format.ts';
import type { Source } from '../types.ts';

/**
 * How much a source holds, in the terms of its type: a site's pages, a text's words and characters,
 * a PDF's or PPTX's pages (else the file's format), a service's documents, a video's transcript.
 */
export function sourceSize(source: Source): string {
  if (source.type === 'url') return plural(source.page_count, 'page');
  if (source.type === 'text') {
    return source.words === undefined
      ? ''
      : `${plural(source.words, 'word')} · ${plural(source.characters ?? 0, 'character')}`;
  }
  if (source.type === 'file') {
    if (source.page_count > 0) return plural(source.page_count, 'page');
    const extension = /\.([a-z0-9]+)$/i.exec(source.title)?.[1];
    return extension ? `${extension.toUpperCase()} file` : 'File';
  }
  if (source.type === 'youtube') return 'Video transcript';
  const sync = source.last_sync;
  const documents = sync ? sync.added + sync.changed + sync.unchanged : 0;
  if (documents > 1) return plural(documents, 'document');
  return source.page_count > 0 ? plural(source.page_count, 'page') : '1 document';
}
