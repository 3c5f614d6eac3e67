import { extractTextItems, getDocumentProxy, getMeta } from 'unpdf';
import { ParseError } from './ingest-errors.ts';
import { layoutPages } from './pdf-layout.ts';
import { pageFromSections, type ParsedDocument } from './parsed-document.ts';
import { baseTitle } from './text-decoding.ts';

/**
 * Reads a PDF with unpdf (pdf.js built for servers, no canvas or worker needed): one page per PDF
 * page, headings and paragraphs recovered from the text layout (see `layoutPages`). Scanned pages
 * without a text layer come out empty; there is no OCR. The title is the PDF's Title property, else
 * its first top-level heading, else the file name.
 */
export async function parsePdf(filename: string, bytes: Uint8Array): Promise<ParsedDocument> {
  let proxy: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may take over the buffer it is given, so it gets a copy; verbosity 0 keeps its
    // warnings about damaged files off stdout (errors still throw).
    proxy = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    const reason = (error as Error).name === 'PasswordException' ? 'the PDF is encrypted' : 'not a readable PDF';
    throw new ParseError(filename, reason, { cause: error });
  }
  try {
    const { items } = await extractTextItems(proxy);
    const { info } = await getMeta(proxy);
    const pageSections = layoutPages(items);
    const pages = pageSections.map(pageFromSections);
    const declared = typeof info.Title === 'string' ? info.Title.trim() : '';
    const firstHeading = pageSections.flat().find((section) => section.headings.length > 0)?.headings[0];
    return { title: declared || firstHeading || baseTitle(filename), pages };
  } catch (error) {
    throw new ParseError(filename, 'the PDF could not be read', { cause: error });
  } finally {
    await proxy.loadingTask.destroy();
  }
}
