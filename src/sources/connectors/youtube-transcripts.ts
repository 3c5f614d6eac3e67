import { YoutubeTranscript } from 'youtube-transcript-plus';
import { decodeEntities, plainCueText, type TimedText } from '../../ingest/subtitle-parser.ts';
import { ConnectorError, DocumentGoneError } from './connector-errors.ts';
import type { ConnectorHttp } from './connector-http.ts';

/** A video's captions: its title, the caption track's language, and the timed lines. */
export interface Transcript {
  title: string;
  language: string;
  segments: TimedText[];
}

/** Where transcripts come from (the port): one video's captions, read through the connector HTTP layer. */
export interface TranscriptSource {
  fetch(videoId: string, http: ConnectorHttp): Promise<Transcript>;
}

const UPLOAD = 'Upload a .vtt or .srt file of its subtitles instead.';
/** Owner-facing reasons, as the failed source shows them. */
export const TRANSCRIPT_ERRORS = {
  rateLimited: `YouTube is limiting requests from this server; try again later. ${UPLOAD}`,
  consent: `YouTube refused this server (it asked for a consent or captcha check). ${UPLOAD}`,
  botCheck: `YouTube refused this server (it asked to confirm it is not a bot). ${UPLOAD}`,
  unavailable: 'This YouTube video is unavailable: it was removed, or the link is wrong.',
  private: 'This YouTube video is private; only public and unlisted videos can be read.',
  noCaptions: `This video has no captions. ${UPLOAD}`,
  captionsOff: `This video has no captions, or its owner turned them off. ${UPLOAD}`,
  emptyPage: 'YouTube sent an empty page for this video; try again later.',
  emptyCaptions: `YouTube sent empty captions for this video (it may be refusing this server). ${UPLOAD}`,
  noText: `The captions of this video hold no text. ${UPLOAD}`,
  unreadablePage: 'YouTube sent a watch page this server cannot read; try again later.',
  notJson: 'YouTube sent a player response that is not JSON.',
} as const;

type Step = 'watch page' | 'player' | 'captions';

// youtube-transcript-plus 2.0.1's index.d.ts imports './types' without an extension, which `nodenext`
// resolution does not find, so the shapes it uses are restated here (dist/types.d.ts).
interface FetchParams {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  userAgent?: string;
}
interface TranscriptResult {
  videoDetails: { title: string };
  segments: Array<{ text: string; duration: number; offset: number; lang: string }>;
}

const YOUTUBE_HOST = /^(?:www\.|m\.)?youtube\.com$/i;
const CONSENT_FORM = /action="https:\/\/consent\.youtube\.com\//;

/**
 * Transcripts read by youtube-transcript-plus (watch page → innertube player → timedtext XML), each
 * of its requests rewritten to `http.baseUrls.youtube` and sent through `http.fetch` (SSRF guard,
 * redirects, Retry-After waits, size cap). The library's own checks stop at "unavailable" and "not
 * available", so every answer is checked here first: rate limits, consent and captcha pages, empty
 * bodies, playability (unavailable, private, bot check) and missing captions each get their own
 * reason. The track read is the library's default, the first one YouTube lists.
 */
export const youtubeTranscriptPlus: TranscriptSource = {
  async fetch(videoId, http) {
    const steps = new CheckedSteps(http);
    const library = new YoutubeTranscript({
      videoDetails: true,
      videoFetch: (params: FetchParams) => steps.send('watch page', params),
      playerFetch: (params: FetchParams) => steps.send('player', params),
      transcriptFetch: (params: FetchParams) => steps.send('captions', params),
    });
    let result: TranscriptResult;
    try {
      const answer: unknown = await library.fetchTranscript(videoId);
      result = answer as TranscriptResult;
    } catch (error) {
      throw libraryError(error, steps.step);
    }
    const segments = result.segments
      .map((segment) => ({
        // The XML is escaped twice (`&amp;#39;`); the library decodes only the first layer.
        text: plainCueText(decodeEntities(segment.text)),
        offsetMs: Math.round(segment.offset * 1000),
        durationMs: Math.round(segment.duration * 1000),
      }))
      .filter((segment) => segment.text !== '');
    if (segments.length === 0) throw new ConnectorError(TRANSCRIPT_ERRORS.noText);
    return { title: result.videoDetails.title, language: result.segments[0]?.lang ?? '', segments };
  },
};

/** The library's three requests, sent through the connector HTTP layer and checked on the way back. */
class CheckedSteps {
  step: Step = 'watch page';
  private readonly http: ConnectorHttp;

  constructor(http: ConnectorHttp) {
    this.http = http;
  }

  async send(step: Step, params: FetchParams): Promise<Response> {
    this.step = step;
    const response = await this.http.fetch(onConfiguredOrigin(params.url, this.http.baseUrls.youtube), {
      method: params.method ?? 'GET',
      headers: {
        ...params.headers,
        ...(params.userAgent ? { 'user-agent': params.userAgent } : {}),
        'accept-language': 'en-US,en;q=0.9',
      },
      ...(params.body !== undefined ? { body: params.body } : {}),
    });
    const body = await response.text();
    checkStatus(response.status, step);
    if (body.trim() === '') {
      throw new ConnectorError(step === 'captions' ? TRANSCRIPT_ERRORS.emptyCaptions : TRANSCRIPT_ERRORS.emptyPage);
    }
    if (step === 'watch page') checkWatchPage(body);
    if (step === 'player') checkPlayer(body);
    return new Response(body, { status: response.status, headers: response.headers });
  }
}

/** The library's URL on the configured origin (a fake's in tests); other hosts are left as they are. */
function onConfiguredOrigin(url: string, base: string): string {
  const target = new URL(url);
  if (!YOUTUBE_HOST.test(target.hostname)) return target.href;
  const origin = new URL(base);
  return `${origin.origin}${origin.pathname.replace(/\/$/, '')}${target.pathname}${target.search}`;
}

function checkStatus(status: number, step: Step): void {
  if (status >= 200 && status < 300) return;
  if (status === 429) throw new ConnectorError(TRANSCRIPT_ERRORS.rateLimited, { statusCode: status });
  if (step === 'watch page' && (status === 404 || status === 410)) {
    throw new DocumentGoneError(TRANSCRIPT_ERRORS.unavailable, { statusCode: status });
  }
  throw new ConnectorError(`YouTube answered HTTP ${status} for the ${step}.`, { statusCode: status });
}

function checkWatchPage(html: string): void {
  if (CONSENT_FORM.test(html) || html.includes('class="g-recaptcha"')) {
    throw new ConnectorError(TRANSCRIPT_ERRORS.consent);
  }
}

interface PlayerResponse {
  playabilityStatus?: { status?: string; reason?: string };
  captions?: { playerCaptionsTracklistRenderer?: { captionTracks?: unknown[] } };
}

function checkPlayer(body: string): void {
  let player: PlayerResponse;
  try {
    player = JSON.parse(body) as PlayerResponse;
  } catch {
    throw new ConnectorError(TRANSCRIPT_ERRORS.notJson);
  }
  const status = player.playabilityStatus?.status ?? 'OK';
  const reason = (player.playabilityStatus?.reason ?? '').trim();
  if (status === 'ERROR') throw new DocumentGoneError(TRANSCRIPT_ERRORS.unavailable);
  if (status === 'LOGIN_REQUIRED' && /\bbot\b/i.test(reason)) throw new ConnectorError(TRANSCRIPT_ERRORS.botCheck);
  if (status === 'LOGIN_REQUIRED' && /private/i.test(reason)) throw new DocumentGoneError(TRANSCRIPT_ERRORS.private);
  if (status !== 'OK') {
    const why = reason.replace(/[.\s]+$/, '') || status;
    throw new ConnectorError(`YouTube will not play this video here: ${why}.`);
  }
  const renderer = player.captions?.playerCaptionsTracklistRenderer;
  if (!renderer) throw new ConnectorError(TRANSCRIPT_ERRORS.captionsOff);
  if (!Array.isArray(renderer.captionTracks) || renderer.captionTracks.length === 0) {
    throw new ConnectorError(TRANSCRIPT_ERRORS.noCaptions);
  }
}

/** What is left for the library to refuse after the checks above, in the owner's words. */
function libraryError(error: unknown, step: Step): unknown {
  if (!(error instanceof Error) || !error.name.startsWith('YoutubeTranscript')) return error;
  if (step === 'watch page') return new ConnectorError(TRANSCRIPT_ERRORS.unreadablePage, { cause: error });
  if (step === 'captions') return new ConnectorError(TRANSCRIPT_ERRORS.noText, { cause: error });
  return new ConnectorError('YouTube sent a player response this server cannot read.', { cause: error });
}
