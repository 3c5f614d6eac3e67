import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import t from 'tap';
import { loadSecretKey, SecretBox, SecretBoxError } from '../../src/connections/secret-box.ts';
import { SecretKeyring } from '../../src/connections/secret-keyring.ts';
import { createLogger } from '../../src/logger.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { startRedis } from '../support/redis-server.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sb-secret-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('sealed values open with their key and associated data only', async (t) => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  const sealed = box.seal('{"token":"secret_abc"}', 'connection-1');
  t.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
  t.notOk(sealed.includes('secret_abc'));
  t.not(box.seal('{"token":"secret_abc"}', 'connection-1'), sealed, 'a fresh IV every time');
  t.equal(box.open(sealed, 'connection-1'), '{"token":"secret_abc"}');
  t.throws(() => box.open(sealed, 'connection-2'), SecretBoxError);
  t.throws(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'connection-1'), SecretBoxError);
  const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
  t.throws(() => box.open(tampered, 'connection-1'), SecretBoxError);
});

t.test('the key comes from SECRET_KEY, else from DATA_DIR, generated there once (mode 600)', async (t) => {
  const hex = 'ab'.repeat(32);
  t.same((await loadSecretKey(hex, dir)).key, Buffer.from(hex, 'hex'));
  const base64 = Buffer.alloc(32, 3).toString('base64');
  t.same(await loadSecretKey(base64, dir), { key: Buffer.alloc(32, 3), generated: false });
  await t.rejects(loadSecretKey('too-short', dir), {
    message: 'Invalid SECRET_KEY: must be 32 bytes as base64 or hex (openssl rand -base64 32)',
  });
  const first = await loadSecretKey(undefined, path.join(dir, 'data'));
  t.equal(first.generated, true);
  const file = path.join(dir, 'data', 'secret.key');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(readFileSync(file, 'utf8'), `${first.key.toString('base64')}\n`);
  t.same(await loadSecretKey(undefined, path.join(dir, 'data')), { key: first.key, generated: false });
});

t.test('a process with another key is refused before it seals anything', async (t) => {
  const redisServer = await startRedis();
  const redis = createClient({ url: redisServer.url });
  await redis.connect();
  t.teardown(async () => {
    await redis.close();
    await redisServer.stop();
  });
  const keys = new RedisKeys('sb:');
  const logger = createLogger('silent');
  const ring = (secretKey: string) => new SecretKeyring({ redis, keys, secretKey, dataDir: dir, logger });
  const box = await ring('11'.repeat(32)).box();
  t.equal(await redis.get('sb:secret-key-check'), box.fingerprint);
  t.equal((await ring('11'.repeat(32)).box()).fingerprint, box.fingerprint);
  await t.rejects(ring('22'.repeat(32)).box(), {
    name: 'SecretKeyMismatchError',
    message:
      'SECRET_KEY does not match the key this deployment seals connection secrets with; give every gateway and the CLI the same SECRET_KEY.',
  });
});
