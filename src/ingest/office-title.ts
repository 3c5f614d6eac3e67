import { load } from 'cheerio';
import { collapseWhitespace } from './html-sections.ts';

/** The OOXML part that holds a document's title (Dublin Core, `dc:title`). */
export const CORE_PROPERTIES = 'docProps/core.xml';

/** The title recorded in a DOCX or PPTX file's core properties, or '' when it has none. */
export function officeTitle(coreXml: Uint8Array | undefined): string {
  if (!coreXml) return '';
  const $ = load(new TextDecoder().decode(coreXml), { xml: true });
  return collapseWhitespace($('dc\\:title').first().text());
}
