import { createHash } from 'node:crypto';
import t from 'tap';
import { ValidationError } from '../../../src/errors.ts';
import { parseDocument } from '../../../src/ingest/document-parser.ts';
import { ForbiddenDestinationError } from '../../../src/net/ssrf-guard.ts';
import { ConnectorError, DocumentGoneError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorContext } from '../../../src/sources/connectors/connector.ts';
import { youtubeConnector } from '../../../src/sources/connectors/youtube-connector.ts';
import { testConnectorContext, thrown } from '../../support/connector-context.ts';
import { consentPage, FakeYouTube, recaptchaPage, type FakeVideo } from '../../fakes/fake-youtube.ts';

const ID = 'dQw4w9WgXcQ';
const WATCH = `https://www.youtube.com/watch?v=${ID}`;
const fake = await new FakeYouTube().start();
t.teardown(() => fake.stop());

const lesson: FakeVideo = {
  title: 'Joins *explained*',
  captions: [
    {
      languageCode: 'en',
      name: 'English',
      lines: [
        [0.5, 2.1, 'Welcome back.'],
        [2.7, 1.9, "Today: <i>inner</i> joins & why they're fast."],
        // A pause of 4.4 s starts a new paragraph.
        [9, 2, 'One. Two. Three.'],
        [11, 2, 'Four. Five.'],
        [13, 2, 'Six.'],
        // Six sentences closed the paragraph at the end of the line before.
        [15, 2, 'Seven [Music]'],
      ],
    },
    { languageCode: 'fr', name: 'French', lines: [[0, 1, 'Bonjour.']] },
  ],
};

const lessonMarkdown = [
  '# Joins \\*explained\\*',
  '',
  "\\[0:00\\] Welcome back. Today: inner joins \\& why they're fast.",
  '',
  '\\[0:09\\] One. Two. Three. Four. Five. Six.',
  '',
  '\\[0:15\\] Seven \\[Music\\]',
  '',
].join('\n');

const context = (options: Parameters<typeof testConnectorContext>[0] = {}): ConnectorContext =>
  testConnectorContext({ ...options, baseUrls: { youtube: fake.url } });

t.beforeEach(() => {
  fake.reset();
  fake.videos.clear();
  fake.videos.set(ID, structuredClone(lesson));
});

t.test('the connector reads YouTube without a connection', async (t) => {
  t.same(
    {
      type: youtubeConnector.type,
      service: youtubeConnector.service,
      connectionOptional: youtubeConnector.connectionOptional,
    },
    { type: 'youtube', service: null, connectionOptional: true },
  );
});

t.test('every form of a video link becomes its canonical watch URL', async (t) => {
  const accepted = [
    WATCH,
    `https://www.youtube.com/watch?v=${ID}&list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs&index=2&t=42s`,
    `https://www.youtube.com/watch?feature=share&v=${ID}`,
    `http://youtube.com/watch?v=${ID}`,
    `youtube.com/watch?v=${ID}`,
    `https://m.youtube.com/watch?v=${ID}`,
    `https://music.youtube.com/watch?v=${ID}&si=abc`,
    `https://youtu.be/${ID}`,
    `https://youtu.be/${ID}?si=Xy12&t=65`,
    `https://www.youtube.com/shorts/${ID}`,
    `https://youtube.com/shorts/${ID}?feature=share`,
    `https://www.youtube.com/embed/${ID}?start=10`,
    `https://www.youtube-nocookie.com/embed/${ID}`,
    `https://www.youtube.com/live/${ID}?si=abc`,
    `https://www.youtube.com/v/${ID}`,
    `  ${ID}  `,
  ];
  for (const reference of accepted) t.equal(youtubeConnector.parseReference(reference), WATCH, reference);

  const refused = [
    'https://www.youtube.com/playlist?list=PL590L5WQmH8fJ54F369BLDSqIwcs-TCfs',
    'https://www.youtube.com/@GoogleDevelopers',
    'https://www.youtube.com/channel/UC_x5XG1OV2P6uZZ5FSM9Ttw',
    'https://www.youtube.com/watch',
    'https://www.youtube.com/watch?v=tooShort',
    `https://www.youtube.com/watch?v=${ID}X`,
    `https://vimeo.com/${ID}`,
    `https://youtube.com.evil.example/watch?v=${ID}`,
    `ftp://www.youtube.com/watch?v=${ID}`,
    'dQw4w9WgXc',
    'not a link',
    '',
  ];
  for (const reference of refused) {
    const error = thrown(() => youtubeConnector.parseReference(reference));
    t.ok(error instanceof ValidationError, reference);
    t.equal(
      (error as ValidationError).detail,
      'url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.',
    );
  }
});

t.test('a video is one document titled by the video and read as timestamped paragraphs', async (t) => {
  const read = context();
  const listing = await youtubeConnector.list(WATCH, read);
  t.same(listing, {
    title: 'Joins *explained*',
    single: true,
    documents: [
      {
        id: ID,
        title: 'Joins *explained*',
        size: null,
        changeToken: createHash('sha256').update(lessonMarkdown).digest('hex'),
        url: WATCH,
      },
    ],
  });
  // The library's three requests, all on the configured origin: the watch page, the ANDROID player,
  // and the first caption track's baseUrl without its `fmt` (so the XML format, not srv3).
  t.same(
    fake.requests.map(({ method, path, query }) => [method, path, query.v ?? query.key, query.lang, query.fmt]),
    [
      ['GET', '/watch', ID, undefined, undefined],
      ['POST', '/youtubei/v1/player', fake.apiKey, undefined, undefined],
      ['GET', '/api/timedtext', ID, 'en', undefined],
    ],
  );
  t.same(JSON.parse(fake.requests[1]!.body), {
    context: { client: { clientName: 'ANDROID', clientVersion: '20.10.38' } },
    videoId: ID,
  });
  t.equal(fake.requests[1]!.headers['content-type'], 'application/json');
  t.match(fake.requests[0]!.headers['user-agent'], /^Mozilla\/5\.0 /);

  // Fetching in the same read reuses the transcript the listing read.
  t.same(await youtubeConnector.fetch(WATCH, listing.documents[0]!, read), {
    kind: 'markdown',
    markdown: lessonMarkdown,
  });
  t.equal(fake.requests.length, 3);
  // A later read asks YouTube again.
  t.same(await youtubeConnector.fetch(WATCH, listing.documents[0]!, context()), {
    kind: 'markdown',
    markdown: lessonMarkdown,
  });
  t.equal(fake.requests.length, 6);

  const parsed = await parseDocument({ filename: 'document.md', bytes: Buffer.from(lessonMarkdown) });
  t.same(parsed.pages[0]!.sections, [
    {
      headings: ['Joins *explained*'],
      blocks: [
        "[0:00] Welcome back. Today: inner joins & why they're fast.",
        '[0:09] One. Two. Three. Four. Five. Six.',
        '[0:15] Seven [Music]',
      ],
    },
  ]);
});

t.test('the change token follows the captions, not the request', async (t) => {
  const first = (await youtubeConnector.list(WATCH, context())).documents[0]!.changeToken;
  t.equal((await youtubeConnector.list(WATCH, context())).documents[0]!.changeToken, first);
  const edited = structuredClone(lesson);
  (edited.captions as Array<{ lines: unknown[] }>)[0]!.lines.push([20, 1, 'Edited.']);
  fake.videos.set(ID, edited);
  t.not((await youtubeConnector.list(WATCH, context())).documents[0]!.changeToken, first);
});

t.test('times past an hour carry the hour; a video without a title is named by its id', async (t) => {
  fake.videos.set(ID, {
    title: '',
    captions: [{ languageCode: 'de', name: 'Deutsch', lines: [[3723.4, 2, 'Spät.']] }],
  });
  const read = context();
  const listing = await youtubeConnector.list(WATCH, read);
  t.equal(listing.title, `YouTube video ${ID}`);
  t.same(await youtubeConnector.fetch(WATCH, listing.documents[0]!, read), {
    kind: 'markdown',
    markdown: `# YouTube video ${ID}\n\n\\[1:02:03\\] Spät.\n`,
  });
});

t.test('a 429 with Retry-After: 1 is waited for, then the video is read', async (t) => {
  fake.answerNext('watch', { status: 429, headers: { 'retry-after': '1' }, body: recaptchaPage() });
  const waits: number[] = [];
  const listing = await youtubeConnector.list(WATCH, context({ waits }));
  t.same(waits, [1000]);
  t.equal(listing.title, 'Joins *explained*');
  t.same(
    fake.requests.map((request) => request.path),
    ['/watch', '/watch', '/youtubei/v1/player', '/api/timedtext'],
  );
});

interface FailureCase {
  name: string;
  arrange: () => void;
  error: typeof ConnectorError;
  message: string;
}

const failures: FailureCase[] = [
  {
    name: 'a video without caption tracks',
    arrange: () => fake.videos.set(ID, { title: 'Silent', captions: 'none' }),
    error: ConnectorError,
    message: 'This video has no captions. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a video whose captions are turned off',
    arrange: () => fake.videos.set(ID, { title: 'Off', captions: 'absent' }),
    error: ConnectorError,
    message:
      'This video has no captions, or its owner turned them off. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a video that does not exist or was removed',
    arrange: () => fake.videos.clear(),
    error: DocumentGoneError,
    message: 'This YouTube video is unavailable: it was removed, or the link is wrong.',
  },
  {
    name: 'a private video',
    arrange: () =>
      fake.videos.set(ID, {
        ...lesson,
        playability: { status: 'LOGIN_REQUIRED', reason: 'This video is private' },
        captions: 'absent',
      }),
    error: DocumentGoneError,
    message: 'This YouTube video is private; only public and unlisted videos can be read.',
  },
  {
    name: 'a sign-in to prove the server is not a bot',
    arrange: () =>
      fake.videos.set(ID, {
        ...lesson,
        playability: { status: 'LOGIN_REQUIRED', reason: 'Sign in to confirm you’re not a bot' },
        captions: 'absent',
      }),
    error: ConnectorError,
    message:
      'YouTube refused this server (it asked to confirm it is not a bot). Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'an age-restricted video',
    arrange: () =>
      fake.videos.set(ID, {
        ...lesson,
        playability: { status: 'LOGIN_REQUIRED', reason: 'Sign in to confirm your age' },
        captions: 'absent',
      }),
    error: ConnectorError,
    message: 'YouTube will not play this video here: Sign in to confirm your age.',
  },
  {
    name: 'a video blocked in the server’s country',
    arrange: () =>
      fake.videos.set(ID, {
        ...lesson,
        playability: {
          status: 'UNPLAYABLE',
          reason: 'The uploader has not made this video available in your country.',
        },
      }),
    error: ConnectorError,
    message: 'YouTube will not play this video here: The uploader has not made this video available in your country.',
  },
  {
    name: 'the consent page instead of the watch page',
    arrange: () => fake.answerNext('watch', { status: 200, body: consentPage(ID) }),
    error: ConnectorError,
    message:
      'YouTube refused this server (it asked for a consent or captcha check). Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a reCAPTCHA page instead of the watch page',
    arrange: () => fake.answerNext('watch', { status: 200, body: recaptchaPage() }),
    error: ConnectorError,
    message:
      'YouTube refused this server (it asked for a consent or captcha check). Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a 429 whose Retry-After is too long to wait for',
    arrange: () => fake.answerNext('watch', { status: 429, headers: { 'retry-after': '3600' }, body: recaptchaPage() }),
    error: ConnectorError,
    message:
      'YouTube is limiting requests from this server; try again later. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a 429 for the captions',
    arrange: () => fake.answerNext('timedtext', { status: 429, headers: { 'retry-after': '3600' }, body: '' }),
    error: ConnectorError,
    message:
      'YouTube is limiting requests from this server; try again later. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'an empty 200 watch page',
    arrange: () => fake.answerNext('watch', { status: 200, body: '' }),
    error: ConnectorError,
    message: 'YouTube sent an empty page for this video; try again later.',
  },
  {
    name: 'an empty 200 player response',
    arrange: () => fake.answerNext('player', { status: 200, body: '' }),
    error: ConnectorError,
    message: 'YouTube sent an empty page for this video; try again later.',
  },
  {
    name: 'empty 200 captions',
    arrange: () => fake.answerNext('timedtext', { status: 200, body: '' }),
    error: ConnectorError,
    message:
      'YouTube sent empty captions for this video (it may be refusing this server). Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a transcript without lines',
    arrange: () =>
      fake.answerNext('timedtext', {
        status: 200,
        body: '<?xml version="1.0" encoding="utf-8" ?><transcript></transcript>',
      }),
    error: ConnectorError,
    message: 'The captions of this video hold no text. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a transcript whose lines are blank',
    arrange: () =>
      fake.videos.set(ID, {
        title: 'Blank',
        captions: [
          {
            languageCode: 'en',
            name: 'English',
            lines: [
              [0, 1, '  '],
              [1, 1, '<i></i>'],
            ],
          },
        ],
      }),
    error: ConnectorError,
    message: 'The captions of this video hold no text. Upload a .vtt or .srt file of its subtitles instead.',
  },
  {
    name: 'a watch page without the innertube key',
    arrange: () => fake.answerNext('watch', { status: 200, body: '<html><body>Something else</body></html>' }),
    error: ConnectorError,
    message: 'YouTube sent a watch page this server cannot read; try again later.',
  },
  {
    name: 'a player response that is not JSON',
    arrange: () => fake.answerNext('player', { status: 200, body: '<html>oops</html>' }),
    error: ConnectorError,
    message: 'YouTube sent a player response that is not JSON.',
  },
  {
    name: 'a server error on the watch page',
    arrange: () => fake.answerNext('watch', { status: 500, body: '<html>Internal error</html>' }),
    error: ConnectorError,
    message: 'YouTube answered HTTP 500 for the watch page.',
  },
  {
    name: 'a refused player request',
    arrange: () =>
      fake.answerNext('player', { status: 400, body: '{"error":{"code":400,"status":"INVALID_ARGUMENT"}}' }),
    error: ConnectorError,
    message: 'YouTube answered HTTP 400 for the player.',
  },
];

t.test('every way YouTube refuses fails the source with a reason a person understands', async (t) => {
  const messages: string[] = [];
  for (const failure of failures) {
    fake.reset();
    fake.videos.set(ID, structuredClone(lesson));
    failure.arrange();
    const error = await youtubeConnector.list(WATCH, context()).catch((caught: unknown) => caught);
    t.ok(error instanceof failure.error, `${failure.name}: ${String(error)}`);
    t.equal((error as Error).message, failure.message, failure.name);
    messages.push((error as Error).message);
  }
  t.same(
    messages.filter((message) => message.includes(fake.apiKey) || message.includes(fake.visitorData)),
    [],
    'no key reaches an error',
  );
});

t.test('a 429 keeps its status code on the error', async (t) => {
  fake.answerNext('watch', { status: 429, headers: { 'retry-after': '3600' }, body: '' });
  const error = await youtubeConnector.list(WATCH, context()).catch((caught: unknown) => caught);
  t.equal((error as ConnectorError).statusCode, 429);
});

t.test('a video removed after it was listed is gone when fetched', async (t) => {
  const listing = await youtubeConnector.list(WATCH, context());
  fake.videos.clear();
  const error = await youtubeConnector
    .fetch(WATCH, listing.documents[0]!, context())
    .catch((caught: unknown) => caught);
  t.ok(error instanceof DocumentGoneError);
  t.equal((error as Error).message, 'This YouTube video is unavailable: it was removed, or the link is wrong.');
});

t.test('a page over the document size cap fails with the HTTP layer’s error', async (t) => {
  const error = await youtubeConnector
    .list(WATCH, context({ maxDocumentBytes: 1024 }))
    .catch((caught: unknown) => caught);
  t.ok(error instanceof ConnectorError);
  t.equal((error as Error).message, `${new URL(fake.url).host} sent more than 1 KB; the limit is 1 KB.`);
});

t.test('the SSRF guard applies to every request (a loopback base URL is refused)', async (t) => {
  const error = await youtubeConnector.list(WATCH, context({ allowPrivate: false })).catch((caught: unknown) => caught);
  t.ok(error instanceof ForbiddenDestinationError);
  t.equal((error as Error).message, '127.0.0.1 is not a public address');
  t.same(fake.requests, []);
});
