import { gzipSync } from 'node:zlib';
import t from 'tap';
import { FetchError } from '../../src/ingest/ingest-errors.ts';
import { bodyText, fetchResource, type FetchOptions } from '../../src/ingest/page-fetcher.ts';
import { ForbiddenDestinationError } from '../../src/net/ssrf-guard.ts';
import { FakeSite, html, redirect } from './fake-site.ts';

const site = await new FakeSite().start();
t.teardown(() => site.stop());

const options: FetchOptions = { allowPrivate: true, timeoutMs: 2000, maxBytes: 1024, maxRedirects: 5, accept: '*/*' };

t.beforeEach(() => {
  site.routes.clear();
  site.requests.length = 0;
});

t.test('with the guard on, loopback and other non-public destinations are refused before any connection', async (t) => {
  site.routes.set('/', html('Home', 'hello'));
  const guarded = { ...options, allowPrivate: false };
  const cases: Array<[string, string]> = [
    [`http://127.0.0.1:${site.port}/`, '127.0.0.1 is not a public address'],
    [`http://2130706433:${site.port}/`, '127.0.0.1 is not a public address'],
    [`http://[::ffff:127.0.0.1]:${site.port}/`, '::ffff:7f00:1 is not a public address'],
    [`http://[::1]:${site.port}/`, '::1 is not a public address'],
    [`http://0.0.0.0:${site.port}/`, '0.0.0.0 is not a public address'],
    // A local-only name is refused without being resolved.
    [`http://localhost:${site.port}/`, 'localhost is not a public address'],
  ];
  for (const [url, message] of cases) {
    const error = await fetchResource(url, guarded).catch((caught: unknown) => caught);
    t.ok(error instanceof ForbiddenDestinationError, url);
    t.equal((error as Error).message, message);
  }
  t.same(site.paths, [], 'the server was never reached');
  // The same request goes through once the guard is lifted, as CRAWL_ALLOW_PRIVATE does.
  t.equal((await fetchResource(`${site.url}/`, options)).statusCode, 200);
});

t.test('a 2xx answer comes back with its media type, charset and body, sent as SwitchboardBot', async (t) => {
  site.routes.set('/latin', {
    headers: { 'content-type': 'Text/HTML; Charset="ISO-8859-1"' },
    body: Buffer.from('<p>caf\xe9</p>', 'latin1'),
  });
  const resource = await fetchResource(`${site.url}/latin`, options);
  t.same(
    { ...resource, body: null },
    {
      url: `${site.url}/latin`,
      statusCode: 200,
      mediaType: 'text/html',
      charset: 'iso-8859-1',
      body: null,
      validators: {},
    },
  );
  t.equal(bodyText(resource), '<p>café</p>');
  t.equal(bodyText({ body: Buffer.from('plain'), charset: 'no-such-charset' }), 'plain');
  t.same(site.requests, [{ path: '/latin', userAgent: 'SwitchboardBot/1.0' }]);
});

t.test('an error status is a FetchError carrying the status', async (t) => {
  site.routes.set('/boom', { status: 500, body: 'oops' });
  const error = await fetchResource(`${site.url}/boom`, options).catch((caught: unknown) => caught);
  t.ok(error instanceof FetchError);
  t.match(error, { message: 'HTTP 500', statusCode: 500, url: `${site.url}/boom` });
});

t.test('redirects are followed by hand, at most five, each hop checked', async (t) => {
  for (let hop = 0; hop < 6; hop += 1) site.routes.set(`/r${hop}`, redirect(`/r${hop + 1}`, hop % 2 ? 301 : 307));
  site.routes.set('/r6', html('End', 'done'));
  const followed = await fetchResource(`${site.url}/r1`, options);
  t.equal(followed.url, `${site.url}/r6`);
  t.same(site.paths, ['/r1', '/r2', '/r3', '/r4', '/r5', '/r6']);
  await t.rejects(fetchResource(`${site.url}/r0`, options), {
    name: 'FetchError',
    message: 'more than 5 redirects',
    statusCode: null,
  });
});

t.test('a redirect that allowRedirect refuses fails the fetch without requesting the target', async (t) => {
  site.routes.set('/away', redirect(`http://localhost:${site.port}/elsewhere`));
  site.routes.set('/elsewhere', html('Elsewhere', 'x'));
  const sameHost = (target: URL) => target.host === `127.0.0.1:${site.port}`;
  await t.rejects(fetchResource(`${site.url}/away`, { ...options, allowRedirect: sameHost }), {
    name: 'FetchError',
    message: `redirect to another site refused: http://localhost:${site.port}/elsewhere`,
  });
  t.same(site.paths, ['/away']);
});

t.test('a redirect to a non-http URL is refused', async (t) => {
  site.routes.set('/file', redirect('file:///etc/passwd'));
  await t.rejects(fetchResource(`${site.url}/file`, options), {
    name: 'FetchError',
    message: 'unsupported protocol file:',
  });
});

t.test('bodies over the limit fail, whether or not they declare their length', async (t) => {
  site.routes.set('/declared', { body: 'x'.repeat(2000) });
  site.routes.set('/chunked', { headers: { 'transfer-encoding': 'chunked' }, body: 'y'.repeat(2000) });
  site.routes.set('/gzip-bomb', { headers: { 'content-encoding': 'gzip' }, body: gzipSync('z'.repeat(100_000)) });
  for (const path of ['/declared', '/chunked', '/gzip-bomb']) {
    await t.rejects(fetchResource(`${site.url}${path}`, options), {
      name: 'FetchError',
      message: 'the response is larger than 1 KB',
    });
  }
  t.equal((await fetchResource(`${site.url}/declared`, { ...options, maxBytes: 2000 })).body?.length, 2000);
});

t.test('a body of an unwanted media type is not downloaded', async (t) => {
  site.routes.set('/data', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  const resource = await fetchResource(`${site.url}/data`, { ...options, wantsBody: (type) => type === 'text/html' });
  t.equal(resource.mediaType, 'application/json');
  t.equal(resource.body, null);
});

t.test('a slow answer times out', async (t) => {
  site.routes.set('/slow', { ...html('Slow', 'x'), delayMs: 1000 });
  const started = Date.now();
  await t.rejects(fetchResource(`${site.url}/slow`, { ...options, timeoutMs: 100 }), {
    name: 'FetchError',
    message: 'timed out after 100 ms',
  });
  t.ok(Date.now() - started < 900);
});

t.test('an aborted fetch fails as aborted', async (t) => {
  site.routes.set('/slow', { ...html('Slow', 'x'), delayMs: 1000 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await t.rejects(fetchResource(`${site.url}/slow`, { ...options, signal: controller.signal }), {
    name: 'FetchError',
    message: 'aborted',
  });
});

t.test('a 2xx answer brings its validators; sent back, a 304 returns without a body instead of failing', async (t) => {
  const conditions: Array<Record<string, string | undefined>> = [];
  const modified = 'Tue, 03 Nov 2026 10:00:00 GMT';
  site.routes.set('/page', (request) => {
    conditions.push({ etag: request.headers['if-none-match'], since: request.headers['if-modified-since'] });
    if (request.headers['if-none-match'] === '"v1"') return { status: 304 };
    return { headers: { 'content-type': 'text/html', etag: '"v1"', 'last-modified': modified }, body: '<p>v1</p>' };
  });
  const first = await fetchResource(`${site.url}/page`, options);
  t.same(first.validators, { etag: '"v1"', lastModified: modified });
  const again = await fetchResource(`${site.url}/page`, { ...options, validators: first.validators });
  t.same(again, { url: `${site.url}/page`, statusCode: 304, mediaType: '', charset: null, body: null, validators: {} });
  t.same(conditions, [
    { etag: undefined, since: undefined },
    { etag: '"v1"', since: modified },
  ]);
  // Asked without validators, a 304 is an error status like any other.
  site.routes.set('/odd', { status: 304 });
  const error = await fetchResource(`${site.url}/odd`, options).catch((caught: unknown) => caught);
  t.match(error, { message: 'HTTP 304', statusCode: 304 });
});

t.test('validators go with the first request only: a redirect target is asked unconditionally', async (t) => {
  const asked: Array<string | undefined> = [];
  site.routes.set('/moved', redirect('/older'));
  site.routes.set('/older', (request) => {
    asked.push(request.headers['if-modified-since']);
    return request.headers['if-modified-since'] ? { status: 304 } : html('Older', 'the page it moved to');
  });
  const resource = await fetchResource(`${site.url}/moved`, {
    ...options,
    validators: { lastModified: 'Tue, 03 Nov 2026 10:00:00 GMT' },
  });
  t.same([resource.statusCode, resource.url, asked], [200, `${site.url}/older`, [undefined]]);
});
