import t from 'tap';
import { parseDocument } from '../../src/ingest/document-parser.ts';
import { ParseError } from '../../src/ingest/ingest-errors.ts';
import { timestamp, transcriptParagraphs } from '../../src/ingest/subtitle-parser.ts';

const bytes = (value: string) => new TextEncoder().encode(value);

t.test('a WebVTT file becomes timestamped paragraphs without its header, notes, styles and markup', async (t) => {
  const vtt = [
    'WEBVTT - Lesson one',
    'Kind: captions',
    'Language: en',
    '',
    'STYLE',
    '::cue { color: papayawhip }',
    '',
    'NOTE written by hand',
    'over two lines',
    '',
    'intro',
    '00:00:01.000 --> 00:00:03.500 align:start position:0%',
    '<v Ana>Welcome to the <i>course</i>.</v>',
    '',
    '00:03.600 --> 00:05.000 line:0',
    'Fish &amp; chips &lt;3',
    '',
    // Rolling automatic captions: each cue repeats the line before it.
    '00:01:05.000 --> 00:01:07.000',
    'hello world<00:01:06.000><c> this</c>',
    '',
    '00:01:07.000 --> 00:01:07.010',
    'hello world this',
    '',
    '00:01:07.010 --> 00:01:09.000',
    'hello world this',
    'and more',
    '',
  ].join('\n');
  const doc = await parseDocument({ filename: 'courses/Lesson 1.vtt', bytes: bytes(vtt) });
  const blocks = ['[0:01] Welcome to the course. Fish & chips <3', '[1:05] hello world this and more'];
  t.same(doc, { title: 'Lesson 1', pages: [{ text: blocks.join('\n\n'), sections: [{ headings: [], blocks }] }] });
});

t.test('a SubRip file with a BOM, CRLF lines, short milliseconds and {\\an8} tags', async (t) => {
  const srt = [
    '\ufeff1',
    '00:00:01,5 --> 00:00:02,000',
    '{\\an8}Hi there.',
    '<font color="#ffff00">Second line</font>',
    '',
    '2',
    '01:02:03,000 --> 01:02:04,000',
    'Late.',
    '',
  ].join('\r\n');
  const doc = await parseDocument({ filename: 'talk.SRT', bytes: bytes(srt) });
  const blocks = ['[0:01] Hi there. Second line', '[1:02:03] Late.'];
  t.same(doc, { title: 'talk', pages: [{ text: blocks.join('\n\n'), sections: [{ headings: [], blocks }] }] });
});

t.test('a SubRip file with dots and a VTT file without its header are still read', async (t) => {
  const srt = '1\n00:00:02.250 --> 00:00:03.000\nDots.\n';
  t.same((await parseDocument({ filename: 'dots.srt', bytes: bytes(srt) })).pages[0]!.text, '[0:02] Dots.');
  const headless = '00:00:04.000 --> 00:00:05.000\nNo header.\n';
  t.same((await parseDocument({ filename: 'bare.vtt', bytes: bytes(headless) })).pages[0]!.text, '[0:04] No header.');
});

t.test('a file that is not subtitles, or subtitles without text, is refused', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['notes.srt', 'hello there\nhow are you', 'Could not read notes.srt: not a WebVTT or SubRip subtitle file'],
    ['broken.srt', '1\nsoon --> later\ntext\n', 'Could not read broken.srt: not a WebVTT or SubRip subtitle file'],
    ['empty.vtt', 'WEBVTT\n\n', 'Could not read empty.vtt: the subtitles hold no text'],
    [
      'tags.vtt',
      'WEBVTT\n\n00:01.000 --> 00:02.000\n<i> </i>\n',
      'Could not read tags.vtt: the subtitles hold no text',
    ],
  ];
  for (const [filename, text, message] of cases) {
    const error = await parseDocument({ filename, bytes: bytes(text) }).catch((caught: unknown) => caught);
    t.ok(error instanceof ParseError, filename);
    t.equal((error as Error).message, message);
  }
});

t.test('paragraphs break at long pauses, after six sentences, and past 1000 characters', async (t) => {
  const cue = (offsetMs: number, text: string, durationMs = 1000) => ({ text, offsetMs, durationMs });
  t.same(
    transcriptParagraphs([
      cue(0, 'First.'),
      // 1.4 s after the end of the line before: the same paragraph.
      cue(2400, 'Still first.'),
      // 2.5 s: a new one.
      cue(5900, 'Second.'),
      cue(7000, '   '),
      cue(8000, 'One. Two. Three. Four.'),
      // The sixth sentence ends mid-line: the paragraph closes at the end of a line that ends one.
      cue(9000, 'Five! Six? Seven'),
      cue(10_000, 'ends here.'),
      cue(11_000, 'Next.'),
    ]),
    ['[0:00] First. Still first.', '[0:05] Second. One. Two. Three. Four. Five! Six? Seven ends here.', '[0:11] Next.'],
  );
  const words = Array.from({ length: 30 }, (_, index) => cue(index * 1000, 'lorem ipsum dolor sit amet consectetur'));
  const long = transcriptParagraphs(words);
  t.same(
    long.map((paragraph) => paragraph.slice(0, 7)),
    ['[0:00] ', '[0:26] '],
  );
  // 26 lines of 38 characters and their spaces are the first line boundary past 1000.
  t.equal(long[0]!.length, '[0:00] '.length + 26 * 39 - 1);
});

t.test('timestamps are m:ss, and h:mm:ss from an hour on', async (t) => {
  t.same([0, 999, 65_000, 599_999, 3_600_000, 3_723_400, 36_000_000].map(timestamp), [
    '0:00',
    '0:00',
    '1:05',
    '9:59',
    '1:00:00',
    '1:02:03',
    '10:00:00',
  ]);
});
