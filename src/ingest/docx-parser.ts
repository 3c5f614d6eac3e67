import { load } from 'cheerio';
import mammoth from 'mammoth';
import { collapseWhitespace, sectionsFromHtml } from './html-sections.ts';
import { ParseError } from './ingest-errors.ts';
import { CORE_PROPERTIES, officeTitle } from './office-title.ts';
import { pageFromSections, type ParsedDocument } from './parsed-document.ts';
import { baseTitle } from './text-decoding.ts';
import { readZipEntries } from './zip-archive.ts';

// Word's "Title" and "Subtitle" paragraph styles are headings too; mammoth's defaults cover Heading 1–6.
const STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];
// Images carry no text: mammoth is told to emit an empty <img> rather than inline them as data URIs.
const SKIP_IMAGES = mammoth.images.imgElement(() => Promise.resolve({ src: '' }));

/**
 * Reads a DOCX file with mammoth, which maps Word's heading styles to `h1`–`h6`; the HTML it makes
 * is turned into sections like a web page. External files a document links to are never read. The
 * title is the document's `dc:title` property, else its first level-1 heading, else the file name.
 */
export async function parseDocx(filename: string, bytes: Uint8Array): Promise<ParsedDocument> {
  // Checks the archive's unpacked size before mammoth inflates it, and picks up the title.
  const entries = readZipEntries(filename, bytes, (name) => name === CORE_PROPERTIES);
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      { styleMap: STYLE_MAP, convertImage: SKIP_IMAGES, externalFileAccess: false },
    );
    html = result.value;
  } catch (error) {
    throw new ParseError(filename, 'not a readable DOCX document', { cause: error });
  }
  const $ = load(html);
  const sections = sectionsFromHtml($('body').get(0)!);
  const title = officeTitle(entries.get(CORE_PROPERTIES)) || collapseWhitespace($('h1').first().text());
  return { title: title || baseTitle(filename), pages: [pageFromSections(sections)] };
}
