import { request } from 'node:http';
import type { Request, Response } from 'restify';
import t from 'tap';
import { closeGracefully, createHttpServer, listen, MAX_BODY_BYTES } from '../../src/http/http-server.ts';
import { jsonBody, type JsonRequest } from '../../src/http/json-body.ts';
import { createLogger } from '../../src/logger.ts';

const server = createHttpServer(createLogger('silent'));
server.post('/echo', jsonBody(), async (req: Request, res: Response) => {
  res.send(200, (req as JsonRequest).body);
});
const port = await listen(server, 0, '127.0.0.1');
t.teardown(() => closeGracefully(server, 100));

async function post(body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body, headers });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

t.test('a JSON object is parsed whatever the Content-Type', async (t) => {
  const json = await post('{"message":"hi"}', { 'content-type': 'application/json' });
  t.same([json.status, json.body], [200, { message: 'hi' }]);
  const none = await post('{"message":"hi"}');
  t.same([none.status, none.body], [200, { message: 'hi' }]);
  const form = await post('{"message":"hi"}', { 'content-type': 'application/x-www-form-urlencoded' });
  t.same([form.status, form.body], [200, { message: 'hi' }]);
});

t.test('malformed JSON, a non-object and an empty body are 400 with a detail', async (t) => {
  const cases: Array<[string, string]> = [
    ['{"message":', 'Request body is not valid JSON.'],
    ['not json', 'Request body is not valid JSON.'],
    ['', 'Request body is not valid JSON.'],
    ['[1,2]', 'Request body must be a JSON object.'],
    ['"text"', 'Request body must be a JSON object.'],
    ['null', 'Request body must be a JSON object.'],
  ];
  for (const [body, detail] of cases) {
    const res = await post(body, { 'content-type': 'application/json' });
    t.same([res.status, res.body], [400, { detail }], JSON.stringify(body));
  }
});

t.test('a body over the limit is 413, by Content-Length and while streaming', async (t) => {
  const big = await post(`{"message":"${'x'.repeat(MAX_BODY_BYTES)}"}`);
  t.same([big.status, big.body], [413, { detail: 'Request body is too large.' }]);
  const exact = await post(`{"m":"${'x'.repeat(MAX_BODY_BYTES - 8)}"}`);
  t.equal(exact.status, 200, 'exactly the limit is accepted');

  // Chunked, so no Content-Length tells the size in advance.
  const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ port, method: 'POST', path: '/echo', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    for (let i = 0; i < 10; i += 1) req.write('x'.repeat(16 * 1024));
    req.end();
  });
  t.same(streamed, { status: 413, body: '{"detail":"Request body is too large."}' });
});

t.test('a compressed body is refused with 415', async (t) => {
  const res = await post('{}', { 'content-encoding': 'gzip' });
  t.same([res.status, res.body], [415, { detail: 'Content-Encoding is not supported.' }]);
});
