import { zipSync } from 'fflate';
import t from 'tap';
import { MAX_FILE_BYTES, parseDocument } from '../../src/ingest/document-parser.ts';
import { ParseError, SizeLimitError, UnsupportedFileError } from '../../src/ingest/ingest-errors.ts';
import { readZipEntries } from '../../src/ingest/zip-archive.ts';
import { makeDocx, makePdf, makePptx } from './document-fixtures.ts';

const text = (value: string) => new TextEncoder().encode(value);

t.test(
  'a PDF has one page per PDF page, headings recovered from font sizes, the Title property as title',
  async (t) => {
    const doc = await parseDocument({ filename: 'handbook.pdf', bytes: await makePdf() });
    t.same(doc, {
      title: 'Employee Handbook',
      pages: [
        {
          text: 'Working Hours\n\nOur office opens at nine in the morning and closes at six in the evening on weekdays.\n\nRemote work is possible two days a week.',
          sections: [
            {
              headings: ['Working Hours'],
              blocks: [
                'Our office opens at nine in the morning and closes at six in the evening on weekdays.',
                'Remote work is possible two days a week.',
              ],
            },
          ],
        },
        {
          text: 'Holidays\n\nEveryone gets twenty-five days of paid leave.',
          sections: [
            { headings: ['Working Hours', 'Holidays'], blocks: ['Everyone gets twenty-five days of paid leave.'] },
          ],
        },
        {
          // The heading trail carries over to a page that continues the section.
          text: 'Holidays\n\nUnused days carry over until the end of March.',
          sections: [
            { headings: ['Working Hours', 'Holidays'], blocks: ['Unused days carry over until the end of March.'] },
          ],
        },
      ],
    });
  },
);

t.test('a DOCX keeps heading levels, paragraphs and table rows; its title comes from its properties', async (t) => {
  const doc = await parseDocument({ filename: 'guide.DOCX', bytes: await makeDocx() });
  t.same(doc, {
    title: 'Product Guide',
    pages: [
      {
        text: 'Getting Started\n\nInstall the app from the store\n\nAccounts\n\nSign up with your work email.\n\nPlan | Price\n\nPro | $10',
        sections: [
          { headings: ['Getting Started'], blocks: ['Install the app from the store'] },
          {
            headings: ['Getting Started', 'Accounts'],
            blocks: ['Sign up with your work email.', 'Plan | Price', 'Pro | $10'],
          },
        ],
      },
    ],
  });
});

t.test('a PPTX has one page per slide, in order, the slide title as heading and table rows as blocks', async (t) => {
  const doc = await parseDocument({ filename: 'review.pptx', bytes: await makePptx() });
  t.equal(doc.title, 'Quarterly Review');
  t.equal(doc.pages.length, 3);
  t.same(
    doc.pages.map((page) => page.sections),
    [
      [{ headings: ['Revenue'], blocks: ['Revenue grew by twelve percent.'] }],
      [{ headings: ['Regions'], blocks: ['Region | Growth', 'Europe | 15%'] }],
      [{ headings: ['Next Steps'], blocks: ['Hire two engineers', 'Open the Berlin office'] }],
    ],
  );
  t.equal(doc.pages[1]!.text, 'Regions\n\nRegion | Growth\n\nEurope | 15%');
});

t.test('slides follow the presentation order, not the file names, and the title falls back to slide 1', async (t) => {
  const slide = (title: string, body: string) =>
    text(
      `<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree>` +
        `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp>` +
        `<p:sp><p:nvSpPr><p:nvPr/></p:nvSpPr><p:txBody><a:p><a:r><a:t>${body}</a:t></a:r><a:br/><a:r><a:t>more</a:t></a:r></a:p></p:txBody></p:sp>` +
        `<p:sp><p:nvSpPr><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>7</a:t></a:r></a:p></p:txBody></p:sp>` +
        `</p:spTree></p:cSld></p:sld>`,
    );
  const bytes = zipSync({
    'ppt/presentation.xml': text(
      '<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId7"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst></p:presentation>',
    ),
    'ppt/_rels/presentation.xml.rels': text(
      '<Relationships><Relationship Id="rId2" Target="slides/slide1.xml"/><Relationship Id="rId7" Target="slides/slide2.xml"/></Relationships>',
    ),
    'ppt/slides/slide1.xml': slide('Second', 'Body two'),
    'ppt/slides/slide2.xml': slide('First', 'Body one'),
  });
  const doc = await parseDocument({ filename: 'deck.pptx', bytes });
  t.same(doc, {
    title: 'First',
    pages: [
      { text: 'First\n\nBody one more', sections: [{ headings: ['First'], blocks: ['Body one more'] }] },
      { text: 'Second\n\nBody two more', sections: [{ headings: ['Second'], blocks: ['Body two more'] }] },
    ],
  });
});

t.test('a CSV row becomes one block of "header: value" lines', async (t) => {
  const csv = '\uFEFFname,role,\r\nAda,"Engineer, lead",x\r\n\r\nGrace,,\r\n';
  const doc = await parseDocument({ filename: 'team.csv', bytes: text(csv) });
  t.same(doc, {
    title: 'team',
    pages: [
      {
        text: 'name: Ada\nrole: Engineer, lead\nColumn 3: x\n\nname: Grace',
        sections: [{ headings: [], blocks: ['name: Ada\nrole: Engineer, lead\nColumn 3: x', 'name: Grace'] }],
      },
    ],
  });
});

t.test('a malformed CSV is a ParseError', async (t) => {
  await t.rejects(parseDocument({ filename: 'bad.csv', bytes: text('a,b\n"unclosed,1\n') }), ParseError);
});

t.test('a TXT file splits into paragraphs at blank lines and keeps line breaks inside them', async (t) => {
  const doc = await parseDocument({
    filename: 'notes/readme.txt',
    bytes: text('First line\r\n  second line  \r\n\r\n\r\nNext paragraph\n'),
  });
  t.same(doc, {
    title: 'readme',
    pages: [
      {
        text: 'First line\nsecond line\n\nNext paragraph',
        sections: [{ headings: [], blocks: ['First line\nsecond line', 'Next paragraph'] }],
      },
    ],
  });
});

t.test('a UTF-16 text file with a byte-order mark is decoded', async (t) => {
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße', 'utf16le')]);
  const doc = await parseDocument({ filename: 'de.txt', bytes: utf16 });
  t.equal(doc.pages[0]!.text, 'Grüße');
});

t.test('Markdown keeps its headings as structure and reduces inline markup to text', async (t) => {
  const md = [
    '---',
    'layout: post',
    '---',
    '# Setup Guide',
    '',
    'Run **npm install** and read [the docs](https://example.com).',
    '',
    '## Options',
    '',
    '- `--port` sets the port',
    '- `--host` sets the host',
    '',
    '| Flag | Default |',
    '| --- | --- |',
    '| port | 8080 |',
    '',
    '```sh',
    'npm start',
    '```',
    '',
    '<script>alert(1)</script>',
  ].join('\n');
  const doc = await parseDocument({ filename: 'setup.md', bytes: text(md) });
  t.same(doc, {
    title: 'Setup Guide',
    pages: [
      {
        text: 'Setup Guide\n\nRun npm install and read the docs.\n\nOptions\n\n--port sets the port\n\n--host sets the host\n\nFlag | Default\n\nport | 8080\n\nnpm start',
        sections: [
          { headings: ['Setup Guide'], blocks: ['Run npm install and read the docs.'] },
          {
            headings: ['Setup Guide', 'Options'],
            blocks: ['--port sets the port', '--host sets the host', 'Flag | Default', 'port | 8080', 'npm start'],
          },
        ],
      },
    ],
  });
});

t.test('a Markdown file without a level-1 heading is titled by its file name', async (t) => {
  const doc = await parseDocument({ filename: 'faq.markdown', bytes: text('## Question\n\nAnswer.') });
  t.equal(doc.title, 'faq');
});

t.test('other extensions are refused with the list of supported types', async (t) => {
  for (const filename of ['logo.png', 'sheet.xlsx', 'README', 'archive.tar.gz']) {
    const error = await parseDocument({ filename, bytes: text('x') }).catch((caught: unknown) => caught);
    t.ok(error instanceof UnsupportedFileError, filename);
    t.equal(
      (error as Error).message,
      `Unsupported file type: ${filename}. Supported types: PDF, DOCX, PPTX, TXT, MD, CSV, VTT, SRT.`,
    );
  }
});

t.test('a file over the size limit is refused before it is parsed', async (t) => {
  t.equal(MAX_FILE_BYTES, 20 * 1024 * 1024);
  const error = await parseDocument({ filename: 'big.txt', bytes: new Uint8Array(MAX_FILE_BYTES + 1) }).catch(
    (caught: unknown) => caught,
  );
  t.ok(error instanceof SizeLimitError);
  t.equal((error as Error).message, 'big.txt is larger than 20 MB');
  await t.resolves(parseDocument({ filename: 'ok.txt', bytes: text('fits') }, 4));
  await t.rejects(parseDocument({ filename: 'small.txt', bytes: text('12345') }, 4), {
    message: 'small.txt is larger than 4 bytes',
  });
});

t.test('files that are not what their extension says are ParseErrors', async (t) => {
  const garbage = text('this is not a binary document');
  await t.rejects(parseDocument({ filename: 'x.pdf', bytes: garbage }), {
    name: 'ParseError',
    message: 'Could not read x.pdf: not a readable PDF',
  });
  await t.rejects(parseDocument({ filename: 'x.docx', bytes: garbage }), {
    name: 'ParseError',
    message: 'Could not read x.docx: not a valid Office Open XML (ZIP) file',
  });
  await t.rejects(parseDocument({ filename: 'x.pptx', bytes: await makeDocx() }), {
    name: 'ParseError',
    message: 'Could not read x.pptx: not a PowerPoint presentation',
  });
  await t.rejects(parseDocument({ filename: 'x.docx', bytes: zipSync({ 'a.txt': text('hi') }) }), {
    name: 'ParseError',
    message: 'Could not read x.docx: not a readable DOCX document',
  });
});

t.test('an archive whose entries declare more than the limit unpacked is refused before inflating', async (t) => {
  const bytes = zipSync({ 'ppt/presentation.xml': new Uint8Array(4096) }, { level: 9 });
  t.ok(bytes.byteLength < 1024, 'the archive itself is small');
  t.throws(() => readZipEntries('bomb.pptx', bytes, () => true, 4000), {
    name: 'SizeLimitError',
    message: 'bomb.pptx unpacked is larger than 4 KB',
  });
  t.equal(readZipEntries('ok.pptx', bytes, () => true, 4096).get('ppt/presentation.xml')?.byteLength, 4096);
});
