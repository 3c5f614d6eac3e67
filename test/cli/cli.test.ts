import t from 'tap';
import { startGateway } from '../support/gateway.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// Every command is a Node process of about a second and a half: the CLI's tests are split over files
// (this one and cli-bots.test.ts) so that each stays well inside tap's per-file timeout.
const gw = await startGateway();
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;
const ok = (args: string[]) => runCliJson(args, env);

t.test('users: create, duplicate, bad input, plan change', async (t) => {
  const user = await ok(['user', 'create', '--email', 'Owner@Example.com', '--plan', 'scale']);
  t.same(Object.keys(user), ['id', 'email', 'plan', 'created_at']);
  t.equal(user.email, 'owner@example.com');
  t.equal(user.plan, 'scale');
  t.match(user.created_at, TIMESTAMP);
  t.same(
    await runCli(['user', 'create', '--email', 'owner@example.com'], env),
    failure('A user with this email already exists.'),
  );
  t.same(await runCli(['user', 'create', '--email', 'nope'], env), failure('email must be a valid email address.'));
  t.same(
    await runCli(['user', 'create', '--email', 'x@example.com', '--plan', 'gold'], env),
    failure('plan must be one of: free, hobby, standard, scale.'),
  );
  const free = await ok(['user', 'create', '--email', 'free@example.com']);
  t.equal(free.plan, 'free');
  const changed = await ok(['user', 'plan', '--user', free.id, '--plan', 'hobby']);
  t.same(changed, { ...free, plan: 'hobby' });
  t.same(
    await runCli(['user', 'plan', '--user', crypto.randomUUID(), '--plan', 'scale'], env),
    failure('User not found.'),
  );
});

t.test('keys: create shows the key once, list, revoke, the cap and the plan rule', async (t) => {
  const user = await ok(['user', 'create', '--email', 'keys@example.com', '--plan', 'scale']);
  const created = await ok(['key', 'create', '--user', user.id, '--name', 'Production']);
  t.same(Object.keys(created), ['id', 'name', 'prefix', 'key', 'created_at']);
  t.equal(created.prefix, created.key.slice(0, 8));
  const listed = await ok(['key', 'list', '--user', user.id]);
  t.same(listed, [
    {
      id: created.id,
      name: 'Production',
      prefix: created.prefix,
      last_used_at: null,
      created_at: created.created_at,
      active: true,
    },
  ]);
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${created.key}` } });
  t.equal(res.status, 200, 'a key created by the CLI works on the gateway');
  const used = await ok(['key', 'list', '--user', user.id]);
  t.match(used[0].last_used_at, TIMESTAMP);
  const revoked = await ok(['key', 'revoke', '--user', user.id, '--key', created.id]);
  t.equal(revoked.active, false);
  const after = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, {
    headers: { authorization: `Bearer ${created.key}` },
  });
  t.equal(after.status, 401, 'revocation takes effect on the next request');
  t.same(
    await runCli(['key', 'revoke', '--user', user.id, '--key', crypto.randomUUID()], env),
    failure('API key not found.'),
  );
  for (let i = 0; i < 5; i += 1) await ok(['key', 'create', '--user', user.id, '--name', `k${i}`]);
  t.same(
    await runCli(['key', 'create', '--user', user.id, '--name', 'sixth'], env),
    failure('Maximum 5 active API keys allowed.'),
  );
  const hobby = await ok(['user', 'create', '--email', 'hobby@example.com', '--plan', 'hobby']);
  t.same(
    await runCli(['key', 'create', '--user', hobby.id, '--name', 'x'], env),
    failure('API access requires the Scale plan.'),
  );
});

t.test('usage errors and bad configuration are one line on stderr with exit 1', async (t) => {
  const unknown = await runCli(['frobnicate'], env);
  t.equal(unknown.code, 1);
  t.equal(unknown.stdout, '');
  t.equal(unknown.stderr, "error: unknown command 'frobnicate'\n");
  const missing = await runCli(['user', 'create'], env);
  t.same(missing, failure("error: required option '--email <email>' not specified"));
  const badConfig = await runCli(['user', 'create', '--email', 'c@example.com'], {
    ...env,
    REDIS_PREFIX: 'bad prefix!',
  });
  t.same(badConfig, failure('Invalid REDIS_PREFIX: must be 1-32 characters of [A-Za-z0-9_:.-]'));
  const noRedis = await runCli(['key', 'list', '--user', 'x'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
  t.equal(noRedis.code, 1);
  t.equal(noRedis.stderr, 'switchboard: Redis is not reachable at 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1\n');
});
