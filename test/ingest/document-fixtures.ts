// Builds real PDF, DOCX and PPTX files in memory with the libraries people make them with, so the
// parsers are tested against the files those tools write rather than against hand-made XML.
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import pptxgen from 'pptxgenjs';

// pptxgenjs's typings describe a CommonJS module, but Node loads its ES build, whose default export
// is the class itself.
const PptxGenJS = pptxgen as unknown as typeof pptxgen.default;

/**
 * A three-page PDF: a 20 pt heading, two paragraphs, a 15 pt subheading, body text on page 3, and a
 * running footer with the page number on every page.
 */
export async function makePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Employee Handbook');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page1 = doc.addPage([600, 800]);
  page1.drawText('Working Hours', { x: 50, y: 740, size: 20, font });
  page1.drawText('Our office opens at nine in the morning and', { x: 50, y: 700, size: 11, font });
  page1.drawText('closes at six in the evening on weekdays.', { x: 50, y: 686, size: 11, font });
  page1.drawText('Remote work is possible two days a week.', { x: 50, y: 650, size: 11, font });
  const page2 = doc.addPage([600, 800]);
  page2.drawText('Holidays', { x: 50, y: 740, size: 15, font });
  page2.drawText('Everyone gets twenty-five days of paid leave.', { x: 50, y: 700, size: 11, font });
  const page3 = doc.addPage([600, 800]);
  page3.drawText('Unused days carry over until the end of March.', { x: 50, y: 740, size: 11, font });
  [page1, page2, page3].forEach((page, index) =>
    page.drawText(`Acme Corp - Page ${index + 1} of 3`, { x: 50, y: 30, size: 9, font }),
  );
  return doc.save();
}

/** A DOCX with a title property, two heading levels, paragraphs and a table. */
export async function makeDocx(): Promise<Uint8Array> {
  const doc = new Document({
    title: 'Product Guide',
    sections: [
      {
        children: [
          new Paragraph({ text: 'Getting Started', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({
            children: [new TextRun('Install the app from the '), new TextRun({ text: 'store', bold: true })],
          }),
          new Paragraph({ text: 'Accounts', heading: HeadingLevel.HEADING_2 }),
          new Paragraph('Sign up with your work email.'),
          new Table({
            rows: [
              new TableRow({ children: [cell('Plan'), cell('Price')] }),
              new TableRow({ children: [cell('Pro'), cell('$10')] }),
            ],
          }),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

function cell(text: string): TableCell {
  return new TableCell({ children: [new Paragraph(text)] });
}

/** A three-slide PPTX whose slides have title placeholders, bullet text, a table and slide numbers. */
export async function makePptx(): Promise<Uint8Array> {
  const pptx = new PptxGenJS();
  pptx.title = 'Quarterly Review';
  pptx.defineSlideMaster({
    title: 'TITLED',
    slideNumber: { x: 9, y: 5.2 },
    objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.2, w: 9, h: 1 }, text: '' } }],
  });
  const first = pptx.addSlide({ masterName: 'TITLED' });
  first.addText('Revenue', { placeholder: 'title' });
  first.addText('Revenue grew by twelve percent.', { x: 0.5, y: 1.5, w: 9, h: 1 });
  const second = pptx.addSlide({ masterName: 'TITLED' });
  second.addText('Regions', { placeholder: 'title' });
  second.addTable(
    [
      [{ text: 'Region' }, { text: 'Growth' }],
      [{ text: 'Europe' }, { text: '15%' }],
    ],
    { x: 0.5, y: 1.5, w: 9 },
  );
  const third = pptx.addSlide({ masterName: 'TITLED' });
  third.addText('Next Steps', { placeholder: 'title' });
  third.addText(
    [
      { text: 'Hire two engineers', options: { bullet: true, breakLine: true } },
      { text: 'Open the Berlin office', options: { bullet: true } },
    ],
    { x: 0.5, y: 1.5, w: 9, h: 2 },
  );
  const output = await pptx.write({ outputType: 'nodebuffer' });
  return new Uint8Array(output as Buffer);
}
