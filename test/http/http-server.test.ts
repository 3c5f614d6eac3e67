import type { Request, Response } from 'restify';
import t from 'tap';
import { closeGracefully, createHttpServer, listen, listenUrl } from '../../src/http/http-server.ts';
import { createLogger } from '../../src/logger.ts';
import { until } from '../support/until.ts';

t.test('graceful close lets an in-flight request finish and refuses new connections', async (t) => {
  const server = createHttpServer(createLogger('silent'));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let arrived = false;
  server.get('/slow', async (_req: Request, res: Response) => {
    arrived = true;
    await gate;
    res.send(200, { done: true });
  });
  const port = await listen(server, 0, '127.0.0.1');
  const inFlight = fetch(`http://127.0.0.1:${port}/slow`);
  await until(() => arrived, 'the request in its handler');
  const closing = closeGracefully(server, 5000);
  await until(() => !server.server.listening, 'the listener closed');
  await t.rejects(fetch(`http://127.0.0.1:${port}/slow`), 'new connections are refused');
  release();
  const res = await inFlight;
  t.same([res.status, await res.json()], [200, { done: true }]);
  await closing;
});

t.test('a handler that throws gets 500 {"detail"} and the server keeps serving', async (t) => {
  const lines: string[] = [];
  const logger = createLogger('error', { write: (line: string) => lines.push(line) });
  const server = createHttpServer(logger);
  server.get('/boom', async () => {
    throw new Error('kaboom');
  });
  server.get('/fine', async (_req: Request, res: Response) => {
    res.send(200, { ok: true });
  });
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeGracefully(server, 100));
  const boom = await fetch(`http://127.0.0.1:${port}/boom`);
  t.same([boom.status, await boom.json()], [500, { detail: 'Internal server error.' }]);
  const fine = await fetch(`http://127.0.0.1:${port}/fine`);
  t.equal(fine.status, 200);
  t.equal(lines.length, 1);
  t.match(JSON.parse(lines[0]!), { level: 50, msg: 'request failed', err: { message: 'kaboom' } });
});

t.test('the address a gateway publishes for links: a wildcard host is localhost, IPv6 in brackets', async (t) => {
  t.same(
    [
      listenUrl('0.0.0.0', 8080),
      listenUrl('::', 8080),
      listenUrl('127.0.0.1', 18080),
      listenUrl('::1', 18080),
      listenUrl('gw.internal', 80),
    ],
    [
      'http://localhost:8080',
      'http://localhost:8080',
      'http://127.0.0.1:18080',
      'http://[::1]:18080',
      'http://gw.internal:80',
    ],
  );
});
