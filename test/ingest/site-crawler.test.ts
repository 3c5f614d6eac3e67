import { gzipSync } from 'node:zlib';
import t from 'tap';
import { DEFAULT_CRAWL_OPTIONS } from '../../src/ingest/crawl-options.ts';
import { FetchError } from '../../src/ingest/ingest-errors.ts';
import { crawlSite, type CrawlProgress, type CrawlResult, type PreviousPage } from '../../src/ingest/site-crawler.ts';
import { FakeSite, html, redirect } from './fake-site.ts';

const site = await new FakeSite().start();
t.teardown(() => site.stop());

t.beforeEach(() => {
  site.routes.clear();
  site.requests.length = 0;
});

const links = (...paths: string[]) => paths.map((path) => `<a href="${path}">${path}</a>`).join(' ');
const xml = (body: string) => ({ headers: { 'content-type': 'application/xml' }, body });
const urlset = (...paths: string[]) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths
    .map((path) => `<url><loc>${path.startsWith('http') ? path : site.url + path}</loc></url>`)
    .join('')}</urlset>`;
const urls = (result: CrawlResult) => result.pages.map((page) => page.url.slice(site.url.length)).sort();
const open = { allowPrivate: true, concurrency: 1 };

t.test(
  'crawls the start page, sitemap entries and same-site links within the depth, as robots.txt allows',
  async (t) => {
    site.routes.set('/robots.txt', { body: 'User-agent: *\nDisallow: /private\n' });
    site.routes.set('/sitemap.xml', xml(urlset('/from-sitemap', `http://localhost:${site.port}/other-host`)));
    site.routes.set(
      '/',
      html(
        'Home',
        `<nav>${links('/a', '/private/page', '/broken', '/file.pdf', '/data', 'https://example.com/')}</nav><main><h1>Welcome</h1><p>Hello.</p></main>`,
      ),
    );
    site.routes.set('/a', html('A', links('/b', '/#top', '/a?ref=1')));
    site.routes.set('/a?ref=1', html('A again', 'same page, other query'));
    site.routes.set('/b', html('B', links('/c')));
    site.routes.set('/c', html('C', links('/d')));
    site.routes.set('/from-sitemap', html('Listed', '<p>Only in the sitemap.</p>'));
    site.routes.set('/broken', { status: 500, body: 'down' });
    site.routes.set('/data', { headers: { 'content-type': 'application/json' }, body: '{}' });
    const progress: CrawlProgress[] = [];
    const result = await crawlSite(`${site.url}/`, { ...open, maxDepth: 2 }, { onProgress: (p) => progress.push(p) });

    t.same(urls(result), ['/', '/a', '/a?ref=1', '/b', '/from-sitemap']);
    t.same(result.errors, [{ url: `${site.url}/broken`, message: 'HTTP 500', statusCode: 500 }]);
    t.same(result.counts, { pages: 5, failed: 1, skipped: 2, queued: 0 });
    t.equal(result.endedBy, 'complete');
    const home = result.pages.find((page) => page.url === `${site.url}/`)!;
    t.same(home, {
      url: `${site.url}/`,
      title: 'Home',
      depth: 0,
      document: {
        title: 'Home',
        pages: [{ text: 'Welcome\n\nHello.', sections: [{ headings: ['Welcome'], blocks: ['Hello.'] }] }],
      },
      validators: {},
      lastmod: '',
      links: ['/a', '/private/page', '/broken', '/file.pdf', '/data']
        .map((path) => site.url + path)
        .concat('https://example.com/'),
    });
    t.equal(result.pages.find((page) => page.url.endsWith('/from-sitemap'))!.depth, 0);
    t.equal(result.pages.find((page) => page.url.endsWith('/b'))!.depth, 2);
    t.same(
      site.paths.slice(0, 3),
      ['/robots.txt', '/sitemap.xml', '/'],
      'robots.txt and the sitemap are read before any page',
    );
    for (const never of ['/private/page', '/c', '/file.pdf', '/other-host']) t.notOk(site.paths.includes(never), never);
    t.ok(site.requests.every((request) => request.userAgent === 'SwitchboardBot/1.0'));
    t.equal(progress.length, 8, 'one report per URL taken from the queue');
    t.same(progress.at(-1), { done: 8, queued: 0, pages: 5, failed: 1 });
  },
);

t.test('sitemap index files are followed, gzipped sitemaps read, and robots.txt sitemaps used', async (t) => {
  site.routes.set('/robots.txt', { body: `User-agent: *\nAllow: /\nSitemap: ${site.url}/maps/index.xml\n` });
  site.routes.set(
    '/maps/index.xml',
    xml(
      `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${site.url}/maps/pages.xml.gz</loc></sitemap><sitemap><loc>${site.url}/maps/missing.xml</loc></sitemap></sitemapindex>`,
    ),
  );
  site.routes.set('/maps/pages.xml.gz', {
    headers: { 'content-type': 'application/gzip' },
    body: gzipSync(urlset('/deep')),
  });
  site.routes.set('/', html('Home', 'home'));
  site.routes.set('/deep', html('Deep', 'from the index'));
  const result = await crawlSite(`${site.url}/`, open);
  t.same(urls(result), ['/', '/deep']);
  t.same(result.errors, [{ url: `${site.url}/maps/missing.xml`, message: 'sitemap: HTTP 404', statusCode: 404 }]);
  t.ok(site.paths.includes('/sitemap.xml'), 'the default location is tried too; its 404 is no error');
});

t.test('the page limit caps the pages kept, with requests in flight counted', async (t) => {
  site.routes.set('/', html('Home', links('/p1', '/p2', '/p3', '/p4', '/p5', '/p6')));
  for (let page = 1; page <= 6; page += 1) site.routes.set(`/p${page}`, html(`P${page}`, `page ${page}`));
  const result = await crawlSite(`${site.url}/`, { allowPrivate: true, concurrency: 4, maxPages: 3 });
  t.equal(result.pages.length, 3);
  t.equal(result.endedBy, 'max-pages');
  t.equal(result.counts.queued, 4, '/p3 to /p6 were left in the queue');
  t.equal(site.paths.filter((path) => /^\/p?\d*$/.test(path)).length, 3, 'no page beyond the limit was fetched');
});

t.test('a redirect to another host is refused; one within the site is followed', async (t) => {
  site.routes.set('/', html('Home', links('/away', '/old', '/new')));
  site.routes.set('/away', redirect(`http://localhost:${site.port}/landing`));
  site.routes.set('/landing', html('Landing', 'other host'));
  site.routes.set('/old', redirect('/new', 301));
  site.routes.set('/new', html('New', 'moved here'));
  const result = await crawlSite(`${site.url}/`, open);
  t.same(urls(result), ['/', '/new']);
  t.same(result.errors, [
    {
      url: `${site.url}/away`,
      message: `redirect to another site refused: http://localhost:${site.port}/landing`,
      statusCode: null,
    },
  ]);
  t.equal(result.counts.skipped, 1, '/new, reached by redirect from /old, is kept once');
  t.notOk(site.paths.includes('/landing'));
});

t.test('with allowPrivate off, a site on a loopback address is refused without a single request', async (t) => {
  site.routes.set('/', html('Home', 'home'));
  for (const start of [`${site.url}/`, `http://localhost:${site.port}/`]) {
    const host = new URL(start).hostname;
    const reason = host === 'localhost' ? 'localhost is not a public address' : '127.0.0.1 is not a public address';
    const result = await crawlSite(start, { allowPrivate: false });
    t.same(result.pages, []);
    t.same(result.errors, [
      {
        url: new URL('/robots.txt', start).href,
        message: `robots.txt could not be read (${reason}), so the site was not crawled`,
        statusCode: null,
      },
    ]);
  }
  t.same(site.paths, []);
  t.equal(DEFAULT_CRAWL_OPTIONS.allowPrivate, false);
});

t.test(
  'robots.txt: a 5xx stops the crawl, a 404 allows everything, SwitchboardBot rules win, a refused start is reported',
  async (t) => {
    site.routes.set('/', html('Home', links('/team', '/blog')));
    site.routes.set('/team', html('Team', 'team'));
    site.routes.set('/blog', html('Blog', 'blog'));
    site.routes.set('/robots.txt', { status: 503 });
    const blocked = await crawlSite(`${site.url}/`, open);
    t.same(blocked.pages, []);
    t.same(blocked.errors, [
      {
        url: `${site.url}/robots.txt`,
        message: 'robots.txt could not be read (HTTP 503), so the site was not crawled',
        statusCode: null,
      },
    ]);
    site.routes.delete('/robots.txt');
    t.same(urls(await crawlSite(`${site.url}/`, open)), ['/', '/blog', '/team']);
    site.routes.set('/robots.txt', {
      body: 'User-agent: *\nDisallow: /\n\nUser-agent: SwitchboardBot\nDisallow: /team\n',
    });
    t.same(urls(await crawlSite(`${site.url}/`, open)), ['/', '/blog']);
    site.routes.set('/robots.txt', { body: 'User-agent: SwitchboardBot\nDisallow: /\n' });
    const refused = await crawlSite(`${site.url}/`, open);
    t.same(refused.pages, []);
    t.same(refused.errors, [{ url: `${site.url}/`, message: 'robots.txt disallows this page', statusCode: null }]);
    t.same(refused.counts, { pages: 0, failed: 0, skipped: 1, queued: 0 });
  },
);

t.test('robots meta tags: noindex pages are not kept, nofollow pages are not followed', async (t) => {
  site.routes.set('/', html('Home', links('/hub', '/leaf')));
  site.routes.set('/hub', html('Hub', `<meta name="robots" content="noindex">${links('/from-hub')}`));
  site.routes.set('/leaf', html('Leaf', `<meta name="robots" content="nofollow">${links('/from-leaf')}`));
  site.routes.set('/from-hub', html('From hub', 'x'));
  site.routes.set('/from-leaf', html('From leaf', 'x'));
  const result = await crawlSite(`${site.url}/`, open);
  t.same(urls(result), ['/', '/from-hub', '/leaf']);
  t.notOk(site.paths.includes('/from-leaf'));
});

t.test('oversized pages fail alone, and slow ones time out alone', async (t) => {
  site.routes.set('/', html('Home', links('/huge', '/slow', '/fine')));
  site.routes.set('/huge', html('Huge', 'x'.repeat(5000)));
  site.routes.set('/slow', { ...html('Slow', 'x'), delayMs: 1000 });
  site.routes.set('/fine', html('Fine', 'ok'));
  const result = await crawlSite(`${site.url}/`, { ...open, maxPageBytes: 2000, requestTimeoutMs: 200 });
  t.same(urls(result), ['/', '/fine']);
  t.same(result.errors, [
    { url: `${site.url}/huge`, message: 'the response is larger than 2 KB', statusCode: null },
    { url: `${site.url}/slow`, message: 'timed out after 200 ms', statusCode: null },
  ]);
});

t.test('the total time limit ends the crawl with what it has, abandoned pages not counted as errors', async (t) => {
  site.routes.set('/', html('Home', links('/slow')));
  site.routes.set('/slow', { ...html('Slow', 'x'), delayMs: 3000 });
  const started = Date.now();
  const result = await crawlSite(`${site.url}/`, { ...open, totalTimeMs: 300 });
  t.ok(Date.now() - started < 2000, 'it returns when the time is up');
  t.equal(result.endedBy, 'time-limit');
  t.same(urls(result), ['/']);
  t.same(result.errors, []);
});

t.test('the caller can abort a crawl', async (t) => {
  site.routes.set('/', html('Home', links('/slow')));
  site.routes.set('/slow', { ...html('Slow', 'x'), delayMs: 3000 });
  const controller = new AbortController();
  const crawl = crawlSite(`${site.url}/`, open, {
    signal: controller.signal,
    onProgress: () => controller.abort(),
  });
  const result = await crawl;
  t.equal(result.endedBy, 'aborted');
  t.same(urls(result), ['/']);
});

t.test('Crawl-delay spaces requests out', async (t) => {
  site.routes.set('/robots.txt', { body: 'User-agent: *\nCrawl-delay: 0.2\n' });
  site.routes.set('/', html('Home', links('/one', '/two')));
  site.routes.set('/one', html('One', 'x'));
  site.routes.set('/two', html('Two', 'x'));
  const started = Date.now();
  const result = await crawlSite(`${site.url}/`, { allowPrivate: true, concurrency: 4 });
  t.equal(result.pages.length, 3);
  t.ok(Date.now() - started >= 600, 'three pages, each followed by a 200 ms pause');
});

t.test('a start URL that is not http(s), or options out of range, throw at once', async (t) => {
  await t.rejects(crawlSite('ftp://example.com/'), FetchError);
  await t.rejects(crawlSite('not a url'), { message: 'the start URL must be an http:// or https:// URL' });
  await t.rejects(crawlSite(`${site.url}/`, { maxPages: 0 }), {
    name: 'RangeError',
    message: 'crawl option maxPages must be an integer >= 1, got 0',
  });
  t.same(site.paths, []);
});

t.test(
  "an earlier crawl's pages: the same sitemap lastmod is not requested, a 304 is kept unchanged, and their recorded links are followed",
  async (t) => {
    const entry = (path: string, lastmod: string) =>
      `<url><loc>${site.url}${path}</loc><lastmod>${lastmod}</lastmod></url>`;
    site.routes.set(
      '/sitemap.xml',
      xml(
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entry('/a', '2026-11-01')}${entry('/b', '2026-11-02')}</urlset>`,
      ),
    );
    site.routes.set('/', (request) =>
      request.headers['if-none-match'] === '"home"' ? { status: 304 } : html('Home', links('/c')),
    );
    site.routes.set('/a', html('A', 'unchanged'));
    site.routes.set('/b', { ...html('B', 'edited'), headers: { 'content-type': 'text/html', etag: '"b2"' } });
    site.routes.set('/c', html('C', 'only linked from the home page'));
    const previous = new Map<string, PreviousPage>([
      [`${site.url}/`, { validators: { etag: '"home"' }, lastmod: '', links: [`${site.url}/c`] }],
      [`${site.url}/a`, { validators: {}, lastmod: '2026-11-01', links: [] }],
      [`${site.url}/b`, { validators: {}, lastmod: '2026-10-01', links: [] }],
    ]);
    const result = await crawlSite(`${site.url}/`, open, { previous: (url) => previous.get(url) });

    t.same(result.unchanged.map(({ url, depth }) => [url.slice(site.url.length), depth]).sort(), [
      ['/', 0],
      ['/a', 0],
    ]);
    t.same(urls(result), ['/b', '/c']);
    const b = result.pages.find((page) => page.url.endsWith('/b'))!;
    t.same([b.lastmod, b.validators], ['2026-11-02', { etag: '"b2"' }]);
    t.same(result.counts, { pages: 4, failed: 0, skipped: 0, queued: 0 });
    t.notOk(site.paths.includes('/a'), 'a page with the recorded lastmod is not requested');
  },
);
