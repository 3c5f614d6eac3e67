import { createServer, type IncomingMessage, type Server } from 'node:http';
import t from 'tap';
import { ForbiddenDestinationError } from '../../../src/net/ssrf-guard.ts';
import { ConnectorError } from '../../../src/sources/connectors/connector-errors.ts';
import {
  createConnectorHttp,
  DEFAULT_BASE_URLS,
  retryAfterMs,
} from '../../../src/sources/connectors/connector-http.ts';

type Handler = (
  req: IncomingMessage,
  body: string,
) => { status: number; headers?: Record<string, string>; body?: string };

/** A loopback server whose answers a test sets; it records what it received. */
async function server(handler: Handler) {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const srv: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const answer = handler(req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => srv.close(resolve)));
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, seen };
}

const waits: number[] = [];
const http = (allowPrivate = true, maxBytes = 1024) =>
  createConnectorHttp({
    baseUrls: DEFAULT_BASE_URLS,
    allowPrivate,
    timeoutMs: 2000,
    maxBytes,
    retries: 2,
    maxRetryAfterMs: 1500,
    sleep: async (ms) => void waits.push(ms),
  });

t.test('with the guard on, a loopback service is refused before any connection', async (t) => {
  const target = await server(() => ({ status: 200 }));
  await t.rejects(http(false).request(`${target.url}/x`), new ForbiddenDestinationError('127.0.0.1'));
  await t.rejects(http(false).request('http://localhost:1/x'), new ForbiddenDestinationError('localhost'));
  t.equal(target.seen.length, 0);
});

t.test('a redirect to another origin is followed without the Authorization header, and is guarded', async (t) => {
  const download = await server(() => ({ status: 200, body: 'file bytes' }));
  const api = await server((req) =>
    req.url === '/content'
      ? { status: 302, headers: { location: `${download.url}/blob?sig=1` } }
      : { status: 302, headers: { location: '/content' } },
  );
  const response = await http().request(`${api.url}/start`, { headers: { authorization: 'Bearer secret-token' } });
  t.equal(response.body.toString(), 'file bytes');
  t.equal(response.url, `${download.url}/blob?sig=1`);
  t.equal(api.seen[1]!.headers.authorization, 'Bearer secret-token', 'kept on the same origin');
  t.equal(download.seen[0]!.headers.authorization, undefined, 'dropped for another origin');
  const guarded = await server(() => ({ status: 302, headers: { location: 'http://127.0.0.1:9/x' } }));
  await t.rejects(
    createConnectorHttp({ ...DEFAULT_OPTIONS, allowPrivate: false }).request(
      guarded.url.replace('127.0.0.1', 'localhost'),
    ),
    ForbiddenDestinationError,
  );
});

const DEFAULT_OPTIONS = {
  baseUrls: DEFAULT_BASE_URLS,
  allowPrivate: true,
  timeoutMs: 2000,
  maxBytes: 1024,
  retries: 2,
  maxRetryAfterMs: 1500,
};

t.test('429 and 503 are retried after Retry-After while it fits; past the limit they are handed back', async (t) => {
  let calls = 0;
  const api = await server(() =>
    ++calls < 3 ? { status: calls === 1 ? 429 : 503, headers: { 'retry-after': '1' } } : { status: 200, body: 'ok' },
  );
  waits.length = 0;
  const response = await http().request(`${api.url}/x`);
  t.equal(response.statusCode, 200);
  t.same(waits, [1000, 1000]);
  const slow = await server(() => ({ status: 429, headers: { 'retry-after': '120' } }));
  waits.length = 0;
  t.equal((await http().request(`${slow.url}/x`)).statusCode, 429);
  t.same(waits, [], 'a two-minute wait is not waited');
  const resets = await server(() => ({
    status: 429,
    headers: { 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600) },
  }));
  waits.length = 0;
  t.equal((await http().request(`${resets.url}/x`)).statusCode, 429);
  t.same(waits, [], 'a window resetting in an hour is not waited for');
  t.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:05 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 5000);
  t.equal(retryAfterMs('soon'), undefined);
});

t.test('bodies over the cap are refused while they arrive; error bodies are cut, not refused', async (t) => {
  const big = await server((req) =>
    req.url === '/error' ? { status: 500, body: 'e'.repeat(100_000) } : { status: 200, body: 'x'.repeat(5000) },
  );
  await t.rejects(
    http().request(`${big.url}/doc`),
    new ConnectorError(`127.0.0.1:${new URL(big.url).port} sent more than 1 KB; the limit is 1 KB.`),
  );
  const error = await http().request(`${big.url}/error`);
  t.equal(error.statusCode, 500);
  t.equal(error.body.length, 64 * 1024);
});

t.test('the fetch it hands SDKs: methods, bodies (a bodyless POST too), headers and statuses', async (t) => {
  const api = await server((req, body) => ({
    status: req.url === '/none' ? 204 : 201,
    headers: { 'content-type': 'application/json', 'x-echo': String(req.headers['x-arg']) },
    body:
      req.url === '/none'
        ? ''
        : JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null }),
  }));
  const { fetch } = http();
  const posted = await fetch(`${api.url}/rpc`, {
    method: 'POST',
    headers: { 'x-arg': '{"a":1}' },
    body: JSON.stringify({ q: 1 }),
  });
  t.equal(posted.status, 201);
  t.equal(posted.headers.get('x-echo'), '{"a":1}');
  t.same(await posted.json(), { method: 'POST', body: '{"q":1}', type: null });
  const bodyless = await fetch(`${api.url}/download`, { method: 'POST' });
  t.same(await bodyless.json(), { method: 'POST', body: '', type: null });
  const form = await fetch(`${api.url}/token`, { method: 'POST', body: new URLSearchParams({ a: 'b c' }) });
  t.same(await form.json(), { method: 'POST', body: 'a=b+c', type: 'application/x-www-form-urlencoded;charset=UTF-8' });
  const request = await fetch(new Request(`${api.url}/req`, { method: 'PUT', body: 'raw' }));
  t.same(await request.json(), { method: 'PUT', body: 'raw', type: 'text/plain;charset=UTF-8' });
  const none = await fetch(`${api.url}/none`);
  t.equal(none.status, 204);
  t.equal(await none.text(), '');
});
