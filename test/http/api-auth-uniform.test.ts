import http from 'node:http';
import t, { type Test } from 'tap';
import { systemClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { ApiKeyStore } from '../../src/store/api-key-store.ts';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key-token.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import { RequestGate } from '../../src/admission/request-gate.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { maskVarying, rawRequest } from '../support/raw-http.ts';
import { apiFetch, assertDescribed, parseRawResponse } from '../support/openapi-contract.ts';

// Issue 18, item 9: a revoked key's 401 took measurably longer than an unknown key's (806 vs 494 µs
// p50): the unknown key ended after the lookup read, the revoked one also ran the admission script.
// Revoking now drops the key's lookup entry, so both end after the same one read. This file checks
// the sameness exactly (bytes on the wire, Redis commands issued) and the timing loosely (medians of
// interleaved samples); `npm run bench -- auth` gives the precise figures.
const gw = await startGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
t.teardown(() => gw.stop());
const { services } = gw.app;
const owner = await scaleAccount(gw.app);

/** One Redis call of the gate: the client method and its keys, with ids and hashes made generic. */
type Call = [method: string, ...keys: string[]];

/** A client that records every call made through it (scripts as `evalSha` with their keys). */
function recording(redis: RedisClient, calls: Call[], generic: Map<string, string>): RedisClient {
  const name = (key: string) => {
    let out = key;
    for (const [specific, placeholder] of generic) out = out.replaceAll(specific, placeholder);
    return out;
  };
  return new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        const script = property === 'evalSha' || property === 'eval';
        const keys = script ? ((args[1] as { keys: string[] }).keys ?? []) : [String(args[0])];
        calls.push([property, ...keys.map(name)]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
t.teardown(() => redis.destroy());

/** The Redis calls one admission of `token` issues, through a gate of its own. */
async function callsOf(token: string): Promise<{ kind: string; calls: Call[] }> {
  const calls: Call[] = [];
  const generic = new Map([
    [hashApiKey(token), '<hash>'],
    [owner.user.id, '<user>'],
  ]);
  const client = recording(redis, calls, generic);
  const keys = services.keys;
  const apiKeys = new ApiKeyStore(client, keys, systemClock);
  const gate = new RequestGate(
    client,
    keys,
    apiKeys,
    services.quota,
    { limit: 100_000, windowMs: 60_000 },
    systemClock,
  );
  const decision = await gate.admit(token);
  return { kind: decision.kind, calls };
}

async function revokedKey(t: Test): Promise<string> {
  const created = await services.apiKeys.create(owner.user.id, 'to revoke');
  const used = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${created.key}` } });
  t.equal(used.status, 200, 'the key worked before it was revoked (and its lookup was cached)');
  await services.apiKeys.revoke(owner.user.id, created.id);
  return created.key;
}

t.test('unknown and revoked keys: the same bytes on the wire', async (t) => {
  const revoked = await revokedKey(t);
  const answers = [];
  for (const token of [generateApiKey(), revoked]) {
    const raw = await rawRequest(gw.app.port, [
      'GET /api/v1/chatbots HTTP/1.1',
      'Host: test',
      `Authorization: Bearer ${token}`,
    ]);
    await assertDescribed('GET', '/api/v1/chatbots', parseRawResponse(raw));
    answers.push(maskVarying(raw));
  }
  const expected = [
    'HTTP/1.1 401 Unauthorized',
    'Server: switchboard',
    'X-Request-Id: *',
    'WWW-Authenticate: Bearer',
    'Content-Type: application/json',
    'Content-Length: 25',
    'Date: *',
    'Connection: close',
    '',
    '{"detail":"Unauthorized"}',
  ].join('\r\n');
  t.same(answers, [expected, expected]);
});

t.test('unknown and revoked keys: the same Redis commands, one read that finds nothing', async (t) => {
  const revoked = await revokedKey(t);
  const unknown = await callsOf(generateApiKey());
  const gone = await callsOf(revoked);
  const lookupOnly = { kind: 'unauthorized', calls: [['get', 'sb:keyhash:<hash>']] };
  t.same(unknown, lookupOnly);
  t.same(gone, lookupOnly);
  const valid = await callsOf(owner.key);
  t.same(
    valid,
    {
      kind: 'admitted',
      calls: [
        ['get', 'sb:keyhash:<hash>'],
        ['evalSha', 'sb:{u:<user>}:user', `sb:{u:<user>}:key:${owner.keyId}`, `sb:{u:<user>}:rl:${owner.keyId}`],
      ],
    },
    'an admitted key runs the admission script as well (the recorder sees it)',
  );
});

t.test('a revoked key whose lookup entry survived is dropped on its next use', async (t) => {
  // As a key revoked by an earlier version (or by a process that died between the two steps) is.
  const created = await services.apiKeys.create(owner.user.id, 'revoked the old way');
  await redis.hSet(services.keys.apiKey(owner.user.id, created.id), 'active', '0');
  t.equal(await redis.exists(services.keys.apiKeyByHash(hashApiKey(created.key))), 1);
  const first = await callsOf(created.key);
  t.same(first, {
    kind: 'unauthorized',
    calls: [
      ['get', 'sb:keyhash:<hash>'],
      ['evalSha', 'sb:{u:<user>}:user', `sb:{u:<user>}:key:${created.id}`, `sb:{u:<user>}:rl:${created.id}`],
      ['del', 'sb:keyhash:<hash>'],
    ],
  });
  t.equal(await redis.exists(services.keys.apiKeyByHash(hashApiKey(created.key))), 0);
  t.same(await callsOf(created.key), { kind: 'unauthorized', calls: [['get', 'sb:keyhash:<hash>']] });
  const listed = (await services.apiKeys.list(owner.user.id)).find((key) => key.id === created.id);
  t.equal(listed?.active, false, 'still listed, as revoked');
});

t.test('revoking drops the lookup entry; revoking again and unknown keys still answer as before', async (t) => {
  const created = await services.apiKeys.create(owner.user.id, 'twice');
  const lookup = services.keys.apiKeyByHash(hashApiKey(created.key));
  t.equal(await redis.exists(lookup), 1);
  const view = await services.apiKeys.revoke(owner.user.id, created.id);
  t.same([view.id, view.active], [created.id, false]);
  t.equal(await redis.exists(lookup), 0);
  t.same((await services.apiKeys.revoke(owner.user.id, created.id)).active, false);
  await t.rejects(services.apiKeys.revoke(owner.user.id, crypto.randomUUID()), {
    name: 'NotFoundError',
    detail: 'API key not found.',
  });
});

t.test('timing: revoked and unknown keys take alike (medians of interleaved samples)', async (t) => {
  // Generous on purpose (a loaded CI machine): before the fix the revoked key's median was 1.8
  // times the unknown key's on this path; `npm run bench -- auth` gives the precise figures.
  const revoked = await revokedKey(t);
  const unknown = generateApiKey();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const timed = (token: string) =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      http
        .get(
          {
            port: gw.app.port,
            host: '127.0.0.1',
            path: '/api/v1/chatbots',
            agent,
            headers: { authorization: `Bearer ${token}` },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              res.statusCode === 401
                ? resolve(Number(process.hrtime.bigint() - started))
                : reject(new Error(`status ${res.statusCode}`)),
            );
          },
        )
        .on('error', reject);
    });
  const samples = { unknown: [] as number[], revoked: [] as number[] };
  for (let i = 0; i < 100; i += 1) await timed(i % 2 ? unknown : revoked);
  for (let i = 0; i < 600; i += 1) {
    const order = i % 2 ? (['unknown', 'revoked'] as const) : (['revoked', 'unknown'] as const);
    for (const kind of order) samples[kind].push(await timed(kind === 'unknown' ? unknown : revoked));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const ratio = median(samples.revoked) / median(samples.unknown);
  t.comment(
    `p50 unknown ${(median(samples.unknown) / 1000).toFixed(0)} µs, revoked ${(median(samples.revoked) / 1000).toFixed(0)} µs, ratio ${ratio.toFixed(3)}`,
  );
  t.ok(ratio > 0.7 && ratio < 1.4, `revoked/unknown median ratio ${ratio.toFixed(3)} within 0.7 to 1.4`);
});
