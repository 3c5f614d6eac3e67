import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PROVIDERS } from '../../src/chatbots/chatbot.ts';
import { EVENT_NAMES } from '../../src/contract/webhook.ts';
import { RATE_LIMITED_DETAIL } from '../../src/http/api-auth.ts';
import { SOURCE_STATUSES, SOURCE_TYPES } from '../../src/sources/source.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch, OPENAPI_DOCUMENT, responseProblems, type ReceivedResponse } from '../support/openapi-contract.ts';
import { WEBHOOK_SCHEMAS } from '../support/webhook-schemas.ts';

// docs/openapi.json is linted by Redocly CLI (a maintained third-party OpenAPI linter, with
// redocly.yaml's rules) as part of `npm test`, served as it is kept, and agrees with the code's own
// lists; the response checker the public API tests use catches what the document does not describe.

const ROOT = path.resolve(import.meta.dirname, '../..');
const REDOCLY = path.join(ROOT, 'node_modules/.bin/redocly');
const document = JSON.parse(readFileSync(OPENAPI_DOCUMENT, 'utf8'));

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; message: string; location: Array<{ pointer?: string }> }>;
}

/** `redocly lint` of a document with the repository's redocly.yaml, its JSON report parsed. */
function lint(file: string): { status: number | null; report: LintReport } {
  const run = spawnSync(REDOCLY, ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'], {
    cwd: ROOT,
    encoding: 'utf8',
    // Nothing sent home, no update check: CI reaches package registries only.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
    timeout: 60_000,
  });
  if (run.error) throw run.error;
  return { status: run.status, report: JSON.parse(run.stdout) as LintReport };
}

t.test('Redocly lints docs/openapi.json (and the webhook schemas it references): no problem at all', async (t) => {
  const { status, report } = lint(OPENAPI_DOCUMENT);
  const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
  t.same(problems, [], 'no errors, no warnings');
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  t.equal(status, 0);
});

t.test('the lint fails on a document with errors (so CI would)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(WEBHOOK_SCHEMAS, path.join(dir, 'webhook-schemas'), { recursive: true });
  const broken = structuredClone(document);
  broken.components.schemas.ChatResponse.examples = [{ response: 42 }];
  delete broken.paths['/chatbots'].get.responses['200'].content;
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(broken));
  const { status, report } = lint(path.join(dir, 'openapi.json'));
  t.equal(status, 1);
  t.same(report.problems.map((p) => p.ruleId).sort(), ['no-invalid-schema-examples', 'no-unused-components']);
});

t.test('the document is OpenAPI 3.1 with SPEC’s four operations, Bearer auth, and the code’s lists', async (t) => {
  t.match(document.openapi, /^3\.1\.\d+$/);
  const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((method) => method !== 'parameters')
      .map((method) => `${method.toUpperCase()} ${p}`),
  );
  t.same(operations, [
    'GET /chatbots',
    'GET /chatbots/{chatbot_id}',
    'GET /chatbots/{chatbot_id}/sources',
    'POST /chatbots/{chatbot_id}/chat',
  ]);
  t.same(document.servers, [{ url: '/api/v1', description: 'The gateway that serves this document' }]);
  t.same(document.security, [{ bearerAuth: [] }]);
  t.match(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' });
  const { schemas } = document.components;
  t.same(schemas.Source.properties.type.enum, [...SOURCE_TYPES]);
  t.same(schemas.Source.properties.status.enum, [...SOURCE_STATUSES]);
  t.same(schemas.Provider.enum, [...PROVIDERS]);
  t.match(RATE_LIMITED_DETAIL(60), new RegExp(schemas.RateLimitDetail.pattern));
  t.match(RATE_LIMITED_DETAIL(1000), new RegExp(schemas.RateLimitDetail.pattern));
  const statuses = (p: string, method: string) => Object.keys(document.paths[p][method].responses);
  t.same(statuses('/chatbots', 'get'), ['200', '401', '429', '500']);
  t.same(statuses('/chatbots/{chatbot_id}', 'get'), ['200', '401', '404', '429', '500']);
  t.same(statuses('/chatbots/{chatbot_id}/sources', 'get'), ['200', '401', '404', '429', '500']);
  t.same(statuses('/chatbots/{chatbot_id}/chat', 'post'), ['200', '400', '401', '404', '413', '415', '429', '500']);
});

t.test('webhooks: every event the code sends, each referencing its JSON Schema file', async (t) => {
  t.same(Object.keys(document.webhooks), [...EVENT_NAMES]);
  for (const event of EVENT_NAMES) {
    const schema = document.webhooks[event].post.requestBody.content['application/json'].schema;
    t.same(schema, { $ref: `webhook-schemas/${event}.json` }, event);
  }
  const files = readdirSync(WEBHOOK_SCHEMAS).sort();
  t.same(files, [...EVENT_NAMES.map((event) => `${event}.json`), 'envelope.json'].sort());
  const envelope = JSON.parse(readFileSync(path.join(WEBHOOK_SCHEMAS, 'envelope.json'), 'utf8'));
  t.same(envelope.properties.event.enum, [...EVENT_NAMES]);
});

t.test('the response checker refuses what the document does not describe', async (t) => {
  const ok: ReceivedResponse = {
    status: 200,
    headers: {
      'Content-Type': 'application/json',
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-Request-Id': 'r',
    },
    body: '[]',
  };
  t.same(await responseProblems('GET', '/api/v1/chatbots', ok), []);
  const item = {
    id: '6f1c2a9e-0a4b-4c1e-9d55-3a2b1c0d9e8f',
    name: 'Bot',
    slug: 'bot',
    provider: 'gemini',
    is_active: true,
    created_at: '2026-11-21T21:06:33.123456+00:00',
  };
  t.same(await responseProblems('GET', '/api/v1/chatbots', { ...ok, body: JSON.stringify([item]) }), []);
  const cases: Array<[string, string, string, ReceivedResponse, RegExp]> = [
    [
      'an undocumented field',
      'GET',
      '/api/v1/chatbots',
      { ...ok, body: JSON.stringify([{ ...item, model: 'x' }]) },
      /additional properties/,
    ],
    [
      'a timestamp without microseconds',
      'GET',
      '/api/v1/chatbots',
      { ...ok, body: JSON.stringify([{ ...item, created_at: '2026-11-21T21:06:33Z' }]) },
      /created_at must match pattern/,
    ],
    ['an envelope around the array', 'GET', '/api/v1/chatbots', { ...ok, body: '{"data":[]}' }, /must be array/],
    ['an undocumented status', 'GET', '/api/v1/chatbots', { ...ok, status: 404 }, /does not describe status 404/],
    [
      'a missing rate-limit header',
      'GET',
      '/api/v1/chatbots',
      { ...ok, headers: { 'Content-Type': 'application/json', 'X-RateLimit-Limit': '60', 'X-Request-Id': 'r' } },
      /header X-RateLimit-Remaining is required/,
    ],
    [
      'a header value of the wrong type',
      'GET',
      '/api/v1/chatbots',
      { ...ok, headers: { ...ok.headers, 'X-RateLimit-Remaining': 'many' } },
      /headers\/x-ratelimit-remaining must be integer/,
    ],
    [
      'a Retry-After header',
      'GET',
      '/api/v1/chatbots',
      { ...ok, headers: { ...ok.headers, 'Retry-After': '60' } },
      /Retry-After is never sent/,
    ],
    [
      'another media type',
      'GET',
      '/api/v1/chatbots',
      { ...ok, headers: { ...ok.headers, 'Content-Type': 'text/html' } },
      /content-type text\/html/,
    ],
    [
      'an error body with a code',
      'POST',
      '/api/v1/chatbots/6f1c2a9e-0a4b-4c1e-9d55-3a2b1c0d9e8f/chat',
      { ...ok, status: 400, body: '{"detail":"x","code":1}' },
      /additional properties/,
    ],
    [
      'another 401 text',
      'GET',
      '/api/v1/chatbots',
      {
        status: 401,
        headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer', 'x-request-id': 'r' },
        body: '{"detail":"Invalid key."}',
      },
      /constant/,
    ],
    ['an operation the document does not have', 'DELETE', '/api/v1/chatbots', ok, /no operation for DELETE/],
  ];
  for (const [name, method, url, response, expected] of cases) {
    t.match((await responseProblems(method, url, response)).join('\n'), expected, name);
  }
});

const gw = await startGateway();
t.teardown(() => gw.stop());

t.test(
  'GET /api/v1/openapi.json serves the document as kept in docs/, to anyone, counting toward nothing',
  async (t) => {
    const owner = await scaleAccount(gw.app);
    const limitOf = async () => {
      const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, {
        headers: { authorization: `Bearer ${owner.key}` },
      });
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    const before = await limitOf();
    const res = await fetch(`${gw.baseUrl}/api/v1/openapi.json`);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/json');
    t.equal(res.headers.get('cache-control'), 'public, max-age=300');
    t.equal(res.headers.get('access-control-allow-origin'), '*');
    t.equal(res.headers.get('x-ratelimit-limit'), null);
    t.equal(await res.text(), readFileSync(OPENAPI_DOCUMENT, 'utf8'), 'the bytes of docs/openapi.json');
    const etag = res.headers.get('etag')!;
    t.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    const revalidated = await fetch(`${gw.baseUrl}/api/v1/openapi.json`, { headers: { 'if-none-match': etag } });
    t.same([revalidated.status, await revalidated.text()], [304, '']);
    for (const authorization of [`Bearer ${owner.key}`, 'Bearer ic_wrong', 'Basic eDp5']) {
      const withHeader = await fetch(`${gw.baseUrl}/api/v1/openapi.json`, { headers: { authorization } });
      t.equal(withHeader.status, 200, `${authorization.split(' ')[0]} credentials are neither needed nor checked`);
    }
    t.equal(await limitOf(), before - 1, 'only the one API call in between counted toward the key');
  },
);

t.test('the webhook schemas are served beside it, so its relative references resolve there too', async (t) => {
  const served = (await (await fetch(`${gw.baseUrl}/api/v1/openapi.json`)).json()) as typeof document;
  const refs = Object.values(served.webhooks as Record<string, any>).map(
    (item) => item.post.requestBody.content['application/json'].schema.$ref as string,
  );
  for (const ref of [...refs, 'webhook-schemas/envelope.json']) {
    const url = new URL(ref, `${gw.baseUrl}/api/v1/openapi.json`);
    const res = await fetch(url);
    t.equal(res.status, 200, url.pathname);
    t.equal(res.headers.get('content-type'), 'application/schema+json');
    t.equal(await res.text(), readFileSync(path.join(WEBHOOK_SCHEMAS, path.basename(ref)), 'utf8'));
  }
  const missing = await fetch(`${gw.baseUrl}/api/v1/webhook-schemas/nothing.json`);
  t.same([missing.status, await missing.json()], [404, { detail: 'Not Found' }]);
});
