import http from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { testEvent } from '../../src/dashboard/test-event.ts';
import { MAX_BODY_BYTES } from '../../src/http/http-server.ts';
import type { LlmProviders } from '../../src/llm/llm-providers.ts';
import { FakeTelegram } from '../fakes/fake-telegram.ts';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { createOwner } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { LogCapture } from '../support/log-capture.ts';
import { operationOf, responseProblems } from '../support/openapi-contract.ts';

// Issue 18, item 6: a property-based fuzz of every route the restify server has (enumerated from the
// server, not listed by hand): random path parameters, query strings, headers and bodies, with and
// without valid credentials. No answer may be a 5xx and the gateway must keep answering /healthz; every
// answer of one of the public API's operations must be one docs/openapi.json describes.
// The seed is printed; FUZZ_SEED=<n> replays a run, FUZZ_RUNS=<n> changes the cases per route.
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 40);

const reply = { text: 'fuzzed answer' };
const providers: LlmProviders = {
  chatgpt: { generate: async () => reply },
  gemini: { generate: async () => reply },
  ollama: { generate: async () => reply },
};
const telegram = await new FakeTelegram().start();
const whatsapp = new FakeWhatsApp();
const logs = new LogCapture();
const gw = await startGateway(
  {
    RATE_LIMIT_PER_MINUTE: '1000000',
    CONVERSATION_RATE_LIMIT: '1000000',
    TELEGRAM_API_ROOT: telegram.url,
    WEBHOOK_ALLOW_PRIVATE: '1',
    LOG_LEVEL: 'error',
  },
  { providers, whatsappSockets: whatsapp.factory },
  logs,
);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
t.teardown(async () => {
  agent.destroy();
  await gw.stop();
  await telegram.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);

/** Real resources of the owner: what a path parameter names when it names something that exists. */
interface World {
  chatbot: string;
  source: string;
  webhook: string;
  delivery: string;
  key: string;
  keyId: string;
  agent: string;
  agentToken: string;
  reply: string;
  session: string;
  cookie: string;
  csrf: string;
}

let worlds = 0;
let activeKeys: string[] = [];

/** A fresh set of resources (a case may have deleted or revoked the previous ones). */
async function freshWorld(): Promise<World> {
  worlds += 1;
  for (const id of activeKeys) await services.apiKeys.revoke(owner.id, id);
  const key = await services.apiKeys.create(owner.id, `fuzz ${worlds}`);
  activeKeys = [key.id];
  const chatbot = await services.chatbots.create(owner.id, { name: `Fuzz ${worlds}` });
  const source = await services.intake.addText(chatbot.id, 'Opening hours are 9 to 5.', 'Hours');
  // A closed loopback port: deliveries fail at once, without reaching the network.
  const created = await services.webhooks.create(chatbot.id, 'http://127.0.0.1:9/hook', ['message.received']);
  const webhook = await services.webhooks.get(created.id);
  const delivery = await services.outbox.emitTo(webhook, testEvent(chatbot.id, 'message.received', Date.now() * 1000));
  const agentUser = await services.agents.create(owner.id, `Agent ${worlds}`);
  // The owner's canned replies start over, so the worlds never meet the cap of 200.
  for (const old of await services.cannedReplies.list(owner.id)) await services.cannedReplies.delete(owner.id, old.id);
  const reply = await services.cannedReplies.create(owner.id, { shortcut: `fuzz-${worlds}`, text: 'Fuzzed.' });
  const session = `api-fuzz-${worlds}`;
  const chat = await request(
    'POST',
    `/api/v1/chatbots/${chatbot.id}/chat`,
    {
      authorization: `Bearer ${key.key}`,
      'content-type': 'application/json',
    },
    JSON.stringify({ message: 'hello', session_id: session }),
  );
  if (chat.status !== 200) throw new Error(`world chat failed: ${chat.status} ${chat.body}`);
  const signedIn = await services.sessions.create(owner.id);
  return {
    chatbot: chatbot.id,
    source: source.id,
    webhook: webhook.id,
    delivery,
    key: key.key,
    keyId: key.id,
    agent: agentUser.id,
    agentToken: agentUser.token,
    reply: reply.id,
    session,
    cookie: `sb_session=${signedIn.token}`,
    csrf: signedIn.csrfToken,
  };
}

/** A response, read whole. */
interface Answer {
  status: number;
  type: string;
  headers: Record<string, string>;
  body: string;
  /** No answer came: the client saw the reset that follows a 413 (status 413 stands in for it). */
  reset?: true;
}

let requests = 0;
/** Answers by status class (`2xx`, `4xx`, …), for the closing comment. */
const classes = new Map<string, number>();

function request(method: string, path: string, headers: Record<string, string>, body?: string | Buffer) {
  requests += 1;
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.app.port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      const kind = `${String(res.statusCode).charAt(0)}xx`;
      classes.set(kind, (classes.get(kind) ?? 0) + 1);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          headers: Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, String(value)])),
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A body over the limit is refused while it streams and the connection closed (413): the
      // client may see the reset before the answer.
      const large = body !== undefined && Buffer.byteLength(body) > MAX_BODY_BYTES;
      if (large && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        resolve({ status: 413, type: '', headers: {}, body: '', reset: true });
      } else reject(error);
    });
    req.end(body);
  });
}

// ---- generators ----

/** Text that is awkward in a path segment, query or JSON string (already URL-safe where it matters). */
const NASTY = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '+5',
  '007',
  'NaN',
  'Infinity',
  '99999999999999999999',
  '9007199254740993',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'x'.repeat(5000),
  '٣',
  '💥',
  '\u0000',
  '<script>',
  "' OR 1=1 --",
  '../../etc/passwd',
];
const nastyString = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const integerLike = fc.oneof(
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom(...NASTY.slice(0, 13)),
);

/**
 * Text percent-encoded byte by byte (UTF-8; a lone surrogate as U+FFFD), except the bytes `keep`
 * accepts. encodeURIComponent would throw on a lone surrogate.
 */
function percentEncode(text: string, keep: (byte: number) => boolean): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += keep(byte) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
const unreserved = (byte: number) => /[A-Za-z0-9._~-]/.test(String.fromCharCode(byte));
const printable = (byte: number) => byte >= 0x21 && byte <= 0x7e;

/** A path segment: raw tricky percent-encodings (sent as they are), or any text, percent-encoded. */
const RAW_SEGMENTS = ['%', '%zz', '%E0%A4%A', '%00', '%2F', '%2e%2e', '..', '.', ';', ';a=b', '%20', 'a%2Fb'];
const segmentFor = (real: string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    { weight: 1, arbitrary: fc.constantFrom(...real).map((v) => v.toUpperCase()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: nastyString.map((v) => percentEncode(v, unreserved) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );

const QUERY_NAMES = ['k', 'limit', 'offset', 'page', 'query', 'state', 'code', 'error', 'chatbot_id', 'session_id'];
/**
 * A query string: each known name present about half the time (so a route meets the pairs it
 * reads together, like `query` and `k`), plus unknown names; integer-like and nasty values, encoded
 * or raw (raw keeps `%`, `+` and `&` as they are).
 */
const queryString = fc
  .tuple(
    fc.record(Object.fromEntries(QUERY_NAMES.map((name) => [name, fc.option(fc.oneof(integerLike, nastyString))]))),
    fc.array(fc.tuple(fc.string({ maxLength: 8 }), nastyString), { maxLength: 2 }),
    fc.boolean(),
  )
  .map(([known, unknown, raw]) =>
    [...Object.entries(known), ...unknown]
      .filter((pair): pair is [string, string] => pair[1] !== null)
      .map(
        ([name, value]) => `${percentEncode(name, unreserved)}=${percentEncode(value, raw ? printable : unreserved)}`,
      )
      .join('&'),
  );

const FIELDS = [
  'name',
  'provider',
  'model',
  'system_prompt',
  'fallback_message',
  'is_active',
  'message',
  'session_id',
  'type',
  'text',
  'shortcut',
  'title',
  'url',
  'refresh',
  'events',
  'event',
  'token',
  'mode',
  'phone',
  'email',
  'password',
  'service',
  'base_url',
  'content',
  'settings',
  'allowed_origins',
  'lead_fields',
  'ctas',
  'escalation_rules',
  'retrieval',
  'query_rewrite',
  'id',
  'label',
  'action',
  'connection_id',
  'reference',
  'agent',
  'custom_data',
  'query',
  'k',
  'limit',
  'offset',
  '__proto__',
];
const fieldValue = fc.oneof(
  nastyString,
  integerLike.map(Number),
  fc.jsonValue({ maxDepth: 2 }),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom(...FIELDS), nastyString, { maxKeys: 3 }),
);
/** A body: none, a JSON object of known fields, any JSON, text that is not JSON, or bytes. */
const body = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 5,
    arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('{', '{"a":', 'null', '"x"', '[1,2', 'a=b&c=d', '\u0000', '{}'.repeat(40_000)),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
);
const headerText = fc.string({ maxLength: 30 }).map((v) => v.replace(/[^\x20-\x7e]/g, '?'));
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Everything a case varies besides the path parameters. */
const caseOf = fc.record({
  otherMethod: fc.option(fc.constantFrom(...METHODS), { freq: 6 }),
  query: fc.option(queryString, { freq: 3 }),
  body,
  contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 4 }),
  encoding: fc.option(fc.constantFrom('gzip', 'identity', 'br'), { freq: 10 }),
  credentials: fc.constantFrom('valid', 'valid', 'valid', 'none', 'garbage', 'other kind'),
  csrf: fc.constantFrom('valid', 'valid', 'none', 'wrong'),
  origin: fc.option(fc.constantFrom('http://evil.example', 'null', 'http://127.0.0.1'), { freq: 5 }),
  fetchSite: fc.option(fc.constantFrom('same-origin', 'cross-site', 'none'), { freq: 5 }),
  filename: fc.option(headerText, { freq: 3 }),
  telegramSecret: fc.option(headerText, { freq: 2 }),
  ifNoneMatch: fc.option(headerText, { freq: 5 }),
  forwardedFor: fc.option(headerText, { freq: 5 }),
});

/** The real values a path parameter can take. */
function realValues(name: string, world: World): string[] {
  const known: Record<string, string[]> = {
    chatbot_id: [world.chatbot],
    source_id: [world.source],
    webhook_id: [world.webhook],
    delivery_id: [world.delivery],
    key_id: [world.keyId],
    agent_id: [world.agent],
    reply_id: [world.reply],
    connection_id: [crypto.randomUUID()],
    session_id: [world.session, 'embed-00000000-0000-4000-8000-000000000000', 'wa_1', 'tg_1'],
    service: ['google_drive', 'notion', 'dropbox', 'onedrive', 'sharepoint', 'zendesk', 'gitbook', 'youtube'],
  };
  return known[name] ?? ['x'];
}

type Case = typeof caseOf extends fc.Arbitrary<infer T> ? T : never;

function headersFor(path: string, world: World, c: Case): Record<string, string> {
  const headers: Record<string, string> = {};
  const bearer = path.startsWith('/agents') ? world.agentToken : world.key;
  const other = path.startsWith('/agents') ? world.key : world.agentToken;
  if (c.credentials === 'valid') headers.authorization = `Bearer ${bearer}`;
  if (c.credentials === 'other kind') headers.authorization = `Bearer ${other}`;
  if (c.credentials === 'garbage') headers.authorization = 'Bearer ic_garbage';
  if (c.credentials !== 'none') headers.cookie = c.credentials === 'garbage' ? 'sb_session=garbage' : world.cookie;
  if (c.csrf === 'valid') headers['x-csrf-token'] = world.csrf;
  if (c.csrf === 'wrong') headers['x-csrf-token'] = 'wrong';
  if (c.origin !== null) headers.origin = c.origin;
  if (c.fetchSite !== null) headers['sec-fetch-site'] = c.fetchSite;
  if (c.contentType !== null) headers['content-type'] = c.contentType;
  if (c.encoding !== null) headers['content-encoding'] = c.encoding;
  if (c.filename !== null) headers['x-filename'] = c.filename;
  if (c.telegramSecret !== null) headers['x-telegram-bot-api-secret-token'] = c.telegramSecret;
  if (c.ifNoneMatch !== null) headers['if-none-match'] = c.ifNoneMatch;
  if (c.forwardedFor !== null) headers['x-forwarded-for'] = c.forwardedFor;
  return headers;
}

/** Every route of the server as (method, path pattern), from restify's own registry. */
function routesOf(): Array<{ method: string; path: string }> {
  const info = gw.app.http.getDebugInfo() as { routes: Array<{ method: string; path: string }> };
  return info.routes.map((route) => ({ method: route.method.toUpperCase(), path: route.path }));
}

const routes = routesOf();
const failures: string[] = [];
/** Answers of the public API's operations that docs/openapi.json does not describe (a few per operation). */
const undescribed = new Map<string, string[]>();
let checkedAgainstDocument = 0;

/** Checks an answer of one of the OpenAPI document's operations against it, and records a mismatch. */
async function checkDescribed(method: string, path: string, answer: Answer): Promise<void> {
  const operation = answer.reset ? undefined : await operationOf(method, path);
  if (!operation) return;
  checkedAgainstDocument += 1;
  const problems = await responseProblems(method, path, answer);
  if (problems.length === 0) return;
  const seen = undescribed.get(operation.operationId!) ?? [];
  if (seen.length < 3)
    seen.push(`${method} ${path} -> ${answer.status} ${answer.body.slice(0, 120)}: ${problems.join('; ')}`);
  undescribed.set(operation.operationId!, seen);
}
/** The last case of each route that got a 5xx (fast-check ends on the smallest one it found). */
const last5xx = new Map<string, string>();
const started = Date.now();
t.comment(`fuzz seed ${SEED}, ${RUNS_PER_ROUTE} cases per route, ${routes.length} routes`);

t.test('the server has the routes the gateway documents', async (t) => {
  t.ok(routes.length >= 60, `${routes.length} routes`);
  for (const expected of [
    'GET /healthz',
    'GET /api/v1/chatbots',
    'POST /api/v1/chatbots/:chatbot_id/chat',
    'GET /dashboard/api/chatbots/:chatbot_id/retrieve',
    'GET /dashboard/api/webhooks/:webhook_id/deliveries',
    'POST /channels/telegram/:chatbot_id',
    'GET /agents/v1/conversations/:chatbot_id/:session_id',
  ]) {
    t.ok(
      routes.some((r) => `${r.method} ${r.path}` === expected),
      expected,
    );
  }
});

t.test('no route answers a 5xx, whatever it is sent', async (t) => {
  for (const route of routes) {
    const world = await freshWorld();
    const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const params = fc.tuple(...names.map((name) => segmentFor(realValues(name, world))));
    await fc
      .assert(
        fc.asyncProperty(params, caseOf, async (values, c) => {
          let path = route.path;
          names.forEach((name, i) => (path = path.replace(`:${name}`, values[i]!)));
          if (c.query !== null) path += `?${c.query}`;
          const method = c.otherMethod ?? route.method;
          const sent = method === 'GET' || method === 'HEAD' ? undefined : c.body;
          const answer = await request(method, path, headersFor(path, world, c), sent);
          await checkDescribed(method, path, answer);
          if (answer.status < 500) return true;
          last5xx.set(
            `${route.method} ${route.path}`,
            `${method} ${path} -> ${answer.status} ${answer.body.slice(0, 200)}`,
          );
          return false;
        }),
        { seed: SEED, numRuns: RUNS_PER_ROUTE },
      )
      .catch((error: unknown) => {
        // After shrinking: the smallest case found, as sent.
        const name = `${route.method} ${route.path}`;
        const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
        failures.push(`${name}: ${reason}; smallest: ${last5xx.get(name) ?? 'none'}`);
      });
  }
  t.same(failures, [], 'no 5xx answers');
  t.same(
    [...undescribed.values()].flat(),
    [],
    'every answer of a public API operation is one docs/openapi.json describes',
  );
  t.ok(checkedAgainstDocument > 0, `${checkedAgainstDocument} answers checked against docs/openapi.json`);
  const health = await request('GET', '/healthz', {});
  t.same([health.status, health.body], [200, '{"status":"ok"}'], 'the gateway still answers');
  t.same(
    logs.lines.filter((line) => line.msg === 'request failed'),
    [],
    'nothing reached the internal-error path',
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const byClass = [...classes]
    .sort()
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  t.comment(`route fuzz: ${requests} requests over ${routes.length} routes in ${seconds} s (${byClass})`);
});
