import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One caption line: start and duration in seconds, and its text as a person reads it. */
export type FakeCaptionLine = [start: number, dur: number, text: string];

/** A caption track of a video. `kind: 'asr'` marks YouTube's automatic captions. */
export interface FakeCaptionTrack {
  languageCode: string;
  name: string;
  kind?: 'asr';
  lines: FakeCaptionLine[];
}

/**
 * A video the fake knows. `playability` is the player's `playabilityStatus` (OK by default);
 * `captions` is its tracks, `'none'` for a `captions` renderer without tracks, or `'absent'` for a
 * player response without `captions` at all.
 */
export interface FakeVideo {
  title: string;
  playability?: { status: string; reason?: string };
  captions: FakeCaptionTrack[] | 'none' | 'absent';
}

/** A request as the fake received it. */
export interface YouTubeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A canned answer for the next request of a step, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export type YouTubeStep = 'watch' | 'player' | 'timedtext';

/**
 * A loopback www.youtube.com for youtube-transcript-plus: the watch page (`GET /watch?v=`, with
 * `ytcfg.set({"INNERTUBE_API_KEY":…,"VISITOR_DATA":…})` and `ytInitialPlayerResponse`), the innertube
 * player (`POST /youtubei/v1/player?key=` with `{context:{client}, videoId}`, answering
 * `playabilityStatus`, `videoDetails` and `captions.playerCaptionsTracklistRenderer.captionTracks`
 * whose `baseUrl`s point at `https://www.youtube.com/api/timedtext…&fmt=srv3`, as YouTube's do), and
 * the timedtext captions (`GET /api/timedtext?v=&lang=`: `<transcript><text start dur>` XML, or the
 * `srv3` format when `fmt=srv3` is asked, text escaped twice as YouTube does). It records every
 * request and can answer the next request of a step with a canned one.
 */
export class FakeYouTube {
  readonly apiKey = 'AIzaSyAO_FJ2SlqU8Q4STEHLGCilw_Y9_11qcW8';
  readonly visitorData = 'CgtfZmFrZVZpc2l0b3IoyP2PwgYyCgoCVVMSBBICGgA%3D';
  readonly videos = new Map<string, FakeVideo>();
  readonly requests: YouTubeRequest[] = [];
  private readonly canned: Record<YouTubeStep, CannedAnswer[]> = { watch: [], player: [], timedtext: [] };
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.route(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The next request of `step` gets `answer` instead of the real one. */
  answerNext(step: YouTubeStep, answer: CannedAnswer): void {
    this.canned[step].push(answer);
  }

  /** Forgets canned answers and recorded requests (videos stay). */
  reset(): void {
    this.requests.length = 0;
    for (const queue of Object.values(this.canned)) queue.length = 0;
  }

  private route(req: IncomingMessage, body: string, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body });
    const step: YouTubeStep | undefined =
      req.method === 'GET' && url.pathname === '/watch'
        ? 'watch'
        : req.method === 'POST' && url.pathname === '/youtubei/v1/player'
          ? 'player'
          : req.method === 'GET' && url.pathname === '/api/timedtext'
            ? 'timedtext'
            : undefined;
    const answer = step
      ? (this.canned[step].shift() ?? this.answer(step, query, body))
      : { status: 404, body: notFoundPage() };
    res.writeHead(answer.status, {
      'content-type': step === 'player' ? 'application/json; charset=UTF-8' : 'text/html; charset=utf-8',
      ...answer.headers,
    });
    res.end(answer.body);
  }

  private answer(step: YouTubeStep, query: Record<string, string>, body: string): CannedAnswer {
    if (step === 'watch') return { status: 200, body: this.watchPage(query.v ?? '') };
    if (step === 'player') return this.playerAnswer(query.key, body);
    const video = this.videos.get(query.v ?? '');
    const track = Array.isArray(video?.captions)
      ? video.captions.find((candidate) => candidate.languageCode === query.lang)
      : undefined;
    // YouTube answers an unknown or expired caption URL with an empty 200.
    if (!track) return { status: 200, body: '' };
    return {
      status: 200,
      headers: { 'content-type': 'text/xml; charset=UTF-8' },
      body: query.fmt === 'srv3' ? srv3(track.lines) : transcriptXml(track.lines),
    };
  }

  private watchPage(videoId: string): string {
    const config = {
      INNERTUBE_API_KEY: this.apiKey,
      INNERTUBE_API_VERSION: 'v1',
      INNERTUBE_CLIENT_NAME: 'WEB',
      INNERTUBE_CLIENT_VERSION: '2.20250612.01.00',
      INNERTUBE_CONTEXT: { client: { hl: 'en', gl: 'US', visitorData: this.visitorData } },
      VISITOR_DATA: this.visitorData,
    };
    const title = this.videos.get(videoId)?.title ?? 'YouTube';
    return [
      '<!DOCTYPE html><html lang="en-US" dir="ltr"><head>',
      `<title>${escapeHtml(title)} - YouTube</title>`,
      `<script nonce="n0nce">ytcfg.set(${JSON.stringify(config)}); window.ytcfg.obfuscatedData_ = [];</script>`,
      '</head><body><div id="player"></div>',
      `<script nonce="n0nce">var ytInitialPlayerResponse = ${JSON.stringify(this.player(videoId))};</script>`,
      '</body></html>',
    ].join('\n');
  }

  private playerAnswer(key: string | undefined, body: string): CannedAnswer {
    if (key !== this.apiKey) {
      const error = {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        errors: [
          { message: 'API key not valid. Please pass a valid API key.', domain: 'global', reason: 'badRequest' },
        ],
        status: 'INVALID_ARGUMENT',
      };
      return { status: 400, body: JSON.stringify({ error }) };
    }
    const request = JSON.parse(body || '{}') as { videoId?: string; context?: { client?: { clientName?: string } } };
    if (!request.context?.client?.clientName || !request.videoId) {
      const error = { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' };
      return { status: 400, body: JSON.stringify({ error }) };
    }
    return { status: 200, body: JSON.stringify(this.player(request.videoId)) };
  }

  private player(videoId: string): Record<string, unknown> {
    const responseContext = { visitorData: this.visitorData, maxAgeSeconds: 0 };
    const video = this.videos.get(videoId);
    if (!video) {
      const playabilityStatus = { status: 'ERROR', reason: 'This video is unavailable', contextParams: 'Q0FBU0FnZ0E=' };
      return { responseContext, playabilityStatus };
    }
    const playabilityStatus = video.playability ?? { status: 'OK', playableInEmbed: true };
    const videoDetails = {
      videoId,
      title: video.title,
      lengthSeconds: '754',
      channelId: 'UCfakeChannel0000000000',
      isOwnerViewing: false,
      shortDescription: 'A lesson.',
      isCrawlable: true,
      thumbnail: { thumbnails: [{ url: `https://i.ytimg.com/vi/${videoId}/default.jpg`, width: 120, height: 90 }] },
      allowRatings: true,
      viewCount: '1024',
      author: 'Fake Channel',
      isPrivate: false,
      isUnpluggedCorpus: false,
      isLiveContent: false,
    };
    const player: Record<string, unknown> = { responseContext, playabilityStatus, videoDetails };
    if (video.captions === 'none') player.captions = { playerCaptionsTracklistRenderer: { captionTracks: [] } };
    else if (video.captions !== 'absent') {
      const captionTracks = video.captions.map((track) => captionTrack(videoId, track));
      player.captions = {
        playerCaptionsTracklistRenderer: {
          captionTracks,
          audioTracks: [{ captionTrackIndices: captionTracks.map((_, index) => index), audioTrackId: 'und' }],
          translationLanguages: [{ languageCode: 'fr', languageName: { runs: [{ text: 'French' }] } }],
          defaultAudioTrackIndex: 0,
        },
      };
    }
    return player;
  }
}

function captionTrack(videoId: string, track: FakeCaptionTrack): Record<string, unknown> {
  const query = new URLSearchParams({
    v: videoId,
    ei: 'xp1JaLv8MJqfzPsP6q-xwQM',
    caps: 'asr',
    opi: '112496729',
    xoaf: '5',
    hl: 'en',
    ip: '0.0.0.0',
    ipbits: '0',
    expire: '1749676582',
    sparams: 'ip,ipbits,expire,v,ei,caps,opi,xoaf',
    signature: 'A1B2C3D4E5F6.0718293A4B5C6D7E8F',
    key: 'yt8',
    ...(track.kind ? { kind: track.kind } : {}),
    lang: track.languageCode,
    fmt: 'srv3',
  });
  return {
    baseUrl: `https://www.youtube.com/api/timedtext?${query.toString()}`,
    name: { runs: [{ text: track.name }] },
    vssId: `${track.kind === 'asr' ? 'a' : ''}.${track.languageCode}`,
    languageCode: track.languageCode,
    ...(track.kind ? { kind: track.kind } : {}),
    isTranslatable: true,
    trackName: '',
  };
}

/** The default timedtext format, text escaped as HTML and then again as XML (`&amp;#39;`). */
function transcriptXml(lines: FakeCaptionLine[]): string {
  const texts = lines.map(([start, dur, text]) => `<text start="${start}" dur="${dur}">${twice(text)}</text>`);
  return `<?xml version="1.0" encoding="utf-8" ?><transcript>${texts.join('')}</transcript>`;
}

function srv3(lines: FakeCaptionLine[]): string {
  const ps = lines.map(([start, dur, text]) => `<p t="${start * 1000}" d="${dur * 1000}">${escapeHtml(text)}</p>`);
  return `<?xml version="1.0" encoding="utf-8" ?><timedtext format="3">\n<body>\n${ps.join('\n')}\n</body>\n</timedtext>`;
}

function twice(text: string): string {
  return escapeHtml(escapeHtml(text));
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** YouTube's watch page that Google shows EU visitors without a consent cookie. */
export function consentPage(videoId: string): string {
  const next = `https://www.youtube.com/watch?v=${videoId}`;
  return [
    '<!DOCTYPE html><html lang="en" dir="ltr"><head><title>Before you continue to YouTube</title></head><body>',
    '<div class="box"><h1>Before you continue to YouTube</h1><p>Google uses cookies and data to deliver services.</p>',
    '<form action="https://consent.youtube.com/s" method="POST" style="display:inline;">',
    `<input type="hidden" name="gl" value="DE"><input type="hidden" name="continue" value="${next}">`,
    '<input type="hidden" name="v" value="cb.20210328-17-p0.en+FX+119">',
    '<input type="submit" value="Accept all" class="button"/></form></div></body></html>',
  ].join('\n');
}

/** Google's "unusual traffic" page with its reCAPTCHA form. */
export function recaptchaPage(): string {
  return [
    '<html><head><title>https://www.youtube.com/watch</title></head><body>',
    '<div id="infoDiv">Our systems have detected unusual traffic from your computer network.</div>',
    '<form id="captcha-form" action="index" method="post">',
    '<div id="recaptcha" class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b"></div>',
    '</form></body></html>',
  ].join('\n');
}

function notFoundPage(): string {
  return '<html><head><title>404 Not Found</title></head><body>Not Found</body></html>';
}
