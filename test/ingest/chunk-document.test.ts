import t from 'tap';
import { chunkDocument } from '../../src/ingest/chunk-document.ts';
import type { ParsedDocument } from '../../src/ingest/parsed-document.ts';
import { estimateTokens } from '../../src/ingest/token-estimate.ts';

const meta = { chatbotId: 'bot-1', sourceId: 'src-9', url: 'https://acme.test/guide' };

/**
 * `count` distinct words (`p3w0 p3w1 …`), so every word of a chunk can be traced to its place; with
 * `sentenceLength`, sentences of that many words, capitalised and ending in a full stop.
 */
function words(prefix: string, count: number, sentenceLength = 0): string {
  return Array.from({ length: count }, (_, index) => {
    if (sentenceLength === 0) return `${prefix}w${index}`;
    const position = index % sentenceLength;
    const word = `${position === 0 ? prefix.toUpperCase() : prefix}w${index}`;
    return position === sentenceLength - 1 ? `${word}.` : word;
  }).join(' ');
}

function bodyOf(content: string, headingLine: string): string {
  t.ok(content.startsWith(`${headingLine}\n\n`), 'the chunk opens with its heading trail');
  return content.slice(headingLine.length + 2);
}

t.test('small sections share a chunk, each under its own heading trail, with the metadata', async (t) => {
  const doc: ParsedDocument = {
    title: 'Guide',
    pages: [
      {
        text: '',
        sections: [
          { headings: [], blocks: ['Welcome to the guide.'] },
          { headings: ['Setup'], blocks: ['Install it.', 'Run it.'] },
          { headings: ['Setup', 'Docker'], blocks: ['Use the image.'] },
        ],
      },
    ],
  };
  t.same(chunkDocument(doc, meta), [
    {
      id: 'src-9:0',
      chatbotId: 'bot-1',
      sourceId: 'src-9',
      position: 0,
      title: 'Guide',
      url: 'https://acme.test/guide',
      content: 'Welcome to the guide.\n\nSetup\n\nInstall it.\n\nRun it.\n\nSetup > Docker\n\nUse the image.',
    },
  ]);
  t.equal(chunkDocument(doc, { ...meta, title: 'Owner title' })[0]!.title, 'Owner title');
});

t.test('a section large enough closes its chunk at the next heading, without overlap across it', async (t) => {
  const doc: ParsedDocument = {
    title: 'Manual',
    pages: [
      { text: '', sections: [{ headings: ['Intro'], blocks: [words('a', 40), words('b', 40)] }] },
      { text: '', sections: [{ headings: ['Usage'], blocks: [words('c', 10)] }] },
    ],
  };
  const chunks = chunkDocument(doc, meta);
  t.same(
    chunks.map((chunk) => [chunk.id, chunk.position, chunk.content]),
    [
      ['src-9:0', 0, `Intro\n\n${words('a', 40)}\n\n${words('b', 40)}`],
      ['src-9:1', 1, `Usage\n\n${words('c', 10)}`],
    ],
  );
});

t.test('a long section is packed to about 300 tokens per chunk with about 50 tokens of overlap', async (t) => {
  const paragraphs = Array.from({ length: 10 }, (_, index) => words(`p${index}`, 60));
  const doc: ParsedDocument = {
    title: 'Manual',
    pages: [{ text: '', sections: [{ headings: ['Manual', 'Install'], blocks: paragraphs }] }],
  };
  const chunks = chunkDocument(doc, meta);
  t.same(
    chunks.map((chunk) => estimateTokens(chunk.content)),
    [238, 288, 288, 132],
  );
  const bodies = chunks.map((chunk) => bodyOf(chunk.content, 'Manual > Install'));
  t.equal(bodies[0], paragraphs.slice(0, 3).join('\n\n'));
  for (let index = 1; index < bodies.length; index += 1) {
    // 38 words × 1.3 = 49.4, the most whole words within 50 tokens.
    const previousTail = bodies[index - 1]!.split(/\s+/).slice(-38).join(' ');
    t.ok(
      bodies[index]!.startsWith(`${previousTail}\n\n`),
      `chunk ${index} opens with the previous chunk's last 38 words`,
    );
  }
  const covered = new Set(bodies.flatMap((body) => body.split(/\s+/)));
  t.equal(covered.size, 600, 'every word of the section is in some chunk, and no word was cut');
});

t.test('a paragraph too large for one chunk is split at sentence ends, every chunk within the maximum', async (t) => {
  const paragraph = words('s', 1000, 20);
  const doc: ParsedDocument = {
    title: 'Long',
    pages: [{ text: '', sections: [{ headings: ['Long'], blocks: [paragraph] }] }],
  };
  const chunks = chunkDocument(doc, meta);
  t.equal(chunks.length, 6);
  for (const chunk of chunks) {
    t.ok(estimateTokens(chunk.content) <= 300, `chunk ${chunk.position} is within the target`);
    t.ok(chunk.content.endsWith('.'), `chunk ${chunk.position} ends at a sentence end`);
  }
  const sourceWords = new Set(paragraph.split(' '));
  const chunkWords = chunks.flatMap((chunk) => bodyOf(chunk.content, 'Long').split(/\s+/));
  t.ok(
    chunkWords.every((word) => sourceWords.has(word)),
    'no word was cut',
  );
  t.equal(new Set(chunkWords).size, 1000);
});

t.test('a sentence too long for one chunk is split between words', async (t) => {
  const doc: ParsedDocument = { title: 'Run-on', pages: [{ text: words('r', 500) }] };
  const chunks = chunkDocument(doc, meta);
  const sourceWords = new Set(words('r', 500).split(' '));
  t.same(
    chunks.map((chunk) => chunk.content.split(/\s+/).length),
    // 192 words is the most within 250 tokens (target 300 less the overlap); then 38 overlap words.
    [192, 38 + 192, 38 + 116],
  );
  t.ok(chunks.every((chunk) => chunk.content.split(/\s+/).every((word) => sourceWords.has(word))));
  t.equal(chunks[1]!.content.split(' ')[0], 'rw154', 'the second chunk starts 38 words before the first ended');
});

t.test('a page without sections is split into blocks at blank lines', async (t) => {
  const doc: ParsedDocument = {
    title: 'Plain',
    pages: [{ text: 'One.\n\n  \n\nTwo.\nStill two.' }, { text: 'Three.' }],
  };
  t.same(
    chunkDocument(doc, meta).map((chunk) => chunk.content),
    ['One.\n\nTwo.\nStill two.\n\nThree.'],
  );
});

t.test('long heading trails are clipped so that no chunk passes the maximum', async (t) => {
  const trail = [words('h', 100), words('k', 100)];
  const doc: ParsedDocument = {
    title: 'Deep',
    pages: [{ text: '', sections: [{ headings: trail, blocks: [words('b', 400)] }] }],
  };
  const chunks = chunkDocument(doc, meta);
  t.ok(chunks.length > 1);
  t.ok(chunks.every((chunk) => estimateTokens(chunk.content) <= 400));
  t.ok(chunks.every((chunk) => chunk.content.startsWith(`${words('h', 76)}\n\n`)));
});

t.test('an empty document has no chunks', async (t) => {
  t.same(chunkDocument({ title: 'Empty', pages: [{ text: '', sections: [] }, { text: '  ' }] }, meta), []);
});

t.test('sizes are validated', async (t) => {
  const doc: ParsedDocument = { title: 'x', pages: [] };
  t.throws(() => chunkDocument(doc, meta, { overlapTokens: 300 }), RangeError);
  t.throws(() => chunkDocument(doc, meta, { targetTokens: 500 }), RangeError);
  t.throws(() => chunkDocument(doc, meta, { minTokens: 301 }), RangeError);
  t.same(chunkDocument(doc, meta, { targetTokens: 100, maxTokens: 120, overlapTokens: 10, minTokens: 20 }), []);
});
