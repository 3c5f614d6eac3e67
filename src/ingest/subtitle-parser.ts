import { parse } from '@plussub/srt-vtt-parser';
import { ParseError } from './ingest-errors.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { baseTitle, decodeText } from './text-decoding.ts';

/** One timed piece of a transcript: a subtitle cue or a caption line, in milliseconds. */
export interface TimedText {
  text: string;
  offsetMs: number;
  durationMs: number;
}

/** A silence at least this long between two lines starts a new paragraph. */
const PAUSE_MS = 2500;
/** A paragraph closes after this many sentences, at the end of the line that completes them. */
const SENTENCES = 6;
/** Captions without punctuation (automatic ones) are cut at a line boundary past this length. */
const MAX_PARAGRAPH_CHARS = 1000;

const SENTENCE_END = /[.!?…]["')\]]*(?=\s|$)/g;
const TIMING =
  /^[ \t]*((?:\d+:)?\d{1,2}:\d{2})[.,](\d{1,3})[ \t]*-->[ \t]*((?:\d+:)?\d{1,2}:\d{2})[.,](\d{1,3})\b.*$/gm;
const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  lrm: '',
  rlm: '',
};

/**
 * Reads a WebVTT (`.vtt`) or SubRip (`.srt`) subtitle file into one page of paragraphs, each starting
 * with the time it is spoken (`[1:05] …`), so answers can point into the recording. Markup (`<i>`,
 * voice and class tags, `{\an8}`) is dropped, entities decoded, lines that repeat the line before
 * (rolling automatic captions) kept once. The title is the file name. Throws `ParseError` for a file
 * that is not subtitles or holds no text.
 */
export function parseSubtitles(filename: string, bytes: Uint8Array): ParsedDocument {
  const paragraphs = transcriptParagraphs(subtitleCues(filename, bytes));
  if (paragraphs.length === 0) throw new ParseError(filename, 'the subtitles hold no text');
  return {
    title: baseTitle(filename),
    pages: [{ text: paragraphs.join('\n\n'), sections: [{ headings: [], blocks: paragraphs }] }],
  };
}

function subtitleCues(filename: string, bytes: Uint8Array): TimedText[] {
  // The library reads only `HH:MM:SS.mmm --> HH:MM:SS.mmm` (VTT) or with a comma (SRT): cue settings
  // after the end time and short millisecond fields would shift its times, so timing lines are
  // rewritten to the plain VTT form and every file is read as VTT.
  const source = decodeText(bytes)
    .trimStart()
    .replace(TIMING, (_, from: string, fromMs: string, to: string, toMs: string) => {
      return `${from}.${fromMs.padEnd(3, '0')} --> ${to}.${toMs.padEnd(3, '0')}`;
    });
  let entries: Array<{ from: number; to: number; text: string }>;
  try {
    // The package's index.d.ts imports './types' without an extension, which `nodenext` does not
    // resolve, so its result type is restated here.
    const parsed = parse(source.startsWith('WEBVTT') ? source : `WEBVTT\n\n${source}`) as unknown;
    entries = (parsed as { entries: typeof entries }).entries;
  } catch (error) {
    throw new ParseError(filename, 'not a WebVTT or SubRip subtitle file', { cause: error });
  }
  const cues: TimedText[] = [];
  let previousLine = '';
  for (const entry of entries) {
    if (Number.isNaN(entry.from)) throw new ParseError(filename, 'not a WebVTT or SubRip subtitle file');
    const lines = entry.text.split('\n').map(plainCueText);
    const fresh = lines.filter(
      (line, index) => line !== '' && line !== (index === 0 ? previousLine : lines[index - 1]),
    );
    previousLine = lines.filter(Boolean).at(-1) ?? previousLine;
    cues.push({ text: fresh.join(' '), offsetMs: entry.from, durationMs: Math.max(0, entry.to - entry.from) });
  }
  return cues;
}

/**
 * A cue's text as plain text: tags (`<i>`, `<v Name>`, `<00:01.000>`, `{\an8}`) dropped, HTML
 * entities decoded, whitespace collapsed.
 */
export function plainCueText(text: string): string {
  return decodeEntities(text.replace(/<[^>]*>/g, '').replace(/\{\\[^}]*\}/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** Decodes named (`&amp;`, `&quot;`, …) and numeric (`&#39;`, `&#x2019;`) character references. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return ENTITIES[name.toLowerCase()] ?? match;
  });
}

/**
 * Joins timed lines into paragraphs, each prefixed with the time it starts (`[1:05] …`,
 * `[1:02:03] …` past an hour). A paragraph ends at a pause of 2.5 s or more, after six sentences
 * (at the end of a line), or past about 1000 characters. Blank lines are skipped.
 */
export function transcriptParagraphs(cues: readonly TimedText[]): string[] {
  const paragraphs: string[] = [];
  let current: { startMs: number; parts: string[]; sentences: number; chars: number } | undefined;
  let lastEndMs = 0;
  const close = () => {
    if (current) paragraphs.push(`[${timestamp(current.startMs)}] ${current.parts.join(' ')}`);
    current = undefined;
  };
  for (const cue of cues) {
    const text = cue.text.replace(/\s+/g, ' ').trim();
    if (text === '') continue;
    if (current && cue.offsetMs - lastEndMs >= PAUSE_MS) close();
    current ??= { startMs: cue.offsetMs, parts: [], sentences: 0, chars: 0 };
    current.parts.push(text);
    current.sentences += text.match(SENTENCE_END)?.length ?? 0;
    current.chars += text.length + 1;
    lastEndMs = cue.offsetMs + cue.durationMs;
    const endsSentence = /[.!?…]["')\]]*$/.test(text);
    if ((current.sentences >= SENTENCES && endsSentence) || current.chars >= MAX_PARAGRAPH_CHARS) close();
  }
  close();
  return paragraphs;
}

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function timestamp(ms: number): string {
  const total = Math.floor(Math.max(0, ms) / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
