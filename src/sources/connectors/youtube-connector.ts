import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors.ts';
import { transcriptParagraphs } from '../../ingest/subtitle-parser.ts';
import type { Connector, ConnectorContext } from './connector.ts';
import { youtubeTranscriptPlus, type Transcript, type TranscriptSource } from './youtube-transcripts.ts';
import { webLink } from './web-link.ts';

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const WATCH_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com']);
const PATH_PREFIXES = new Set(['shorts', 'embed', 'live', 'v']);
const INVALID = 'url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.';

/**
 * The canonical watch URL of a YouTube video reference: a watch link (`youtube.com`, `www.`, `m.`,
 * `music.`; extra parameters ignored), `youtu.be/{id}`, `/shorts/{id}`, `/embed/{id}` (also on
 * `youtube-nocookie.com`), `/live/{id}`, `/v/{id}`, or a bare 11-character id. Playlists and channels
 * are refused. Throws `ValidationError`.
 */
export function canonicalVideoUrl(reference: string): string {
  const trimmed = reference.trim();
  if (VIDEO_ID.test(trimmed)) return watchUrl(trimmed);
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ValidationError(INVALID);
  const host = url.hostname.toLowerCase();
  const [first = '', second = ''] = url.pathname.split('/').filter(Boolean);
  let id: string | null = null;
  if (host === 'youtu.be') id = first;
  else if (WATCH_HOSTS.has(host) && first === 'watch') id = url.searchParams.get('v');
  else if (WATCH_HOSTS.has(host) && PATH_PREFIXES.has(first)) id = second;
  else if (/^(?:www\.)?youtube-nocookie\.com$/.test(host) && first === 'embed') id = second;
  if (id === null || !VIDEO_ID.test(id)) throw new ValidationError(INVALID);
  return watchUrl(id);
}

function watchUrl(id: string): string {
  return `https://www.youtube.com/watch?v=${id}`;
}

/**
 * The markdown a transcript is indexed as: the title as a heading, then paragraphs of the captions,
 * each starting with its time in the video (`[1:05] …`).
 */
export function transcriptMarkdown(title: string, transcript: Transcript): string {
  const paragraphs = transcriptParagraphs(transcript.segments).map(escapeMarkdown);
  return `# ${escapeMarkdown(title)}\n\n${paragraphs.join('\n\n')}\n`;
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|~&!]/g, '\\$&');
}

/**
 * A YouTube source: one video, read as its captions (no connection needed). Listing reads the
 * transcript too, as it is the only way to learn the title and whether there is anything to read;
 * the change token is a hash of it, and `fetch` in the same read reuses it instead of asking again.
 */
export function createYoutubeConnector(transcripts: TranscriptSource): Connector {
  // Keyed by the read's context, so a transcript lives only as long as the read that listed it.
  const listed = new WeakMap<ConnectorContext, Map<string, Transcript>>();
  const read = (videoId: string, context: ConnectorContext) => transcripts.fetch(videoId, context.http);
  return {
    type: 'youtube',
    service: null,
    connectionOptional: true,
    parseReference: canonicalVideoUrl,
    async list(reference, context) {
      const url = canonicalVideoUrl(reference);
      const videoId = new URL(url).searchParams.get('v')!;
      const transcript = await read(videoId, context);
      const memo = listed.get(context) ?? new Map<string, Transcript>();
      listed.set(context, memo.set(videoId, transcript));
      const title = titleOf(transcript, videoId);
      const changeToken = createHash('sha256').update(transcriptMarkdown(title, transcript)).digest('hex');
      return { title, single: true, documents: [{ id: videoId, title, size: null, changeToken, url }] };
    },
    async fetch(reference, document, context) {
      const videoId = new URL(canonicalVideoUrl(reference)).searchParams.get('v')!;
      const memo = listed.get(context);
      const transcript = memo?.get(videoId) ?? (await read(videoId, context));
      memo?.delete(videoId);
      return {
        kind: 'markdown',
        markdown: transcriptMarkdown(document.title || titleOf(transcript, videoId), transcript),
      };
    },
  };
}

function titleOf(transcript: Transcript, videoId: string): string {
  return transcript.title.trim() || `YouTube video ${videoId}`;
}

/** YouTube transcripts through youtube-transcript-plus. */
export const youtubeConnector: Connector = createYoutubeConnector(youtubeTranscriptPlus);
