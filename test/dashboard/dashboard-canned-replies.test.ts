import t from 'tap';
import { runCli } from '../support/cli.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';

const gw = await startGateway();
t.teardown(() => gw.stop());
const { services } = gw.app;
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;
const BASE = '/dashboard/api/canned-replies';
const SHORTCUT_RULE = 'shortcut must be 1 to 32 characters of a-z, 0-9, - and _.';

t.test('canned replies: create, list by shortcut, change, delete', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  t.same([(await client.get(BASE)).status, (await client.get(BASE)).body], [200, []]);
  const created = await client.post(BASE, { shortcut: '/refund', text: 'Refunds take 5 working days.' });
  t.equal(created.status, 201);
  t.same(created.body, {
    id: created.body.id,
    shortcut: 'refund',
    text: 'Refunds take 5 working days.',
    created_at: created.body.created_at,
    updated_at: created.body.created_at,
  });
  t.match(created.body.created_at, TIMESTAMP);
  t.equal(created.headers.get('cache-control'), 'no-store');
  const hours = (await client.post(BASE, { shortcut: 'hours', text: 'We are open 9 to 5.' })).body;
  t.same((await client.get(BASE)).body, [hours, created.body], 'ordered by shortcut');

  const renamed = await client.patch(`${BASE}/${created.body.id}`, { shortcut: 'refund-eu' });
  t.equal(renamed.status, 200);
  t.same(renamed.body, { ...created.body, shortcut: 'refund-eu', updated_at: renamed.body.updated_at });
  const both = await client.patch(`${BASE}/${created.body.id}`, { shortcut: 'refund', text: 'Refunds: 3 days.' });
  t.same([both.status, both.body.shortcut, both.body.text], [200, 'refund', 'Refunds: 3 days.']);
  const unchanged = await client.patch(`${BASE}/${created.body.id}`, { shortcut: null });
  t.same([unchanged.status, unchanged.body.shortcut], [200, 'refund'], 'null leaves a field as it is');

  const deleted = await client.del(`${BASE}/${created.body.id}`);
  t.same([deleted.status, deleted.body], [200, { id: created.body.id, deleted: true }]);
  t.same((await client.get(BASE)).body, [hours]);
  const again = await client.del(`${BASE}/${created.body.id}`);
  t.same([again.status, again.body], [404, { detail: 'Canned reply not found.' }]);
});

t.test('bad input gets 400 with a detail naming the problem; a taken shortcut 409', async (t) => {
  const client = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const cases: Array<[unknown, string]> = [
    [{}, 'shortcut is required.'],
    [{ shortcut: 5, text: 'x' }, 'shortcut must be a string.'],
    [{ shortcut: '', text: 'x' }, SHORTCUT_RULE],
    [{ shortcut: 'Refund', text: 'x' }, SHORTCUT_RULE],
    [{ shortcut: 'has space', text: 'x' }, SHORTCUT_RULE],
    [{ shortcut: 'x'.repeat(33), text: 'x' }, SHORTCUT_RULE],
    [{ shortcut: 'ok' }, 'text is required.'],
    [{ shortcut: 'ok', text: ['x'] }, 'text must be a string.'],
    [{ shortcut: 'ok', text: '   ' }, 'text must not be empty.'],
    [{ shortcut: 'ok', text: 'x'.repeat(4001) }, 'text must be at most 4000 characters.'],
  ];
  for (const [body, detail] of cases) {
    const res = await client.post(BASE, body);
    t.same([res.status, res.body], [400, { detail }], JSON.stringify(body).slice(0, 60));
  }
  const notJson = await client.request('POST', BASE, undefined, { 'content-type': 'application/json' });
  t.same([notJson.status, notJson.body], [400, { detail: 'Request body is not valid JSON.' }]);
  t.same((await client.get(BASE)).body, [], 'nothing was stored');

  const first = (await client.post(BASE, { shortcut: 'refund', text: 'One.' })).body;
  const twin = await client.post(BASE, { shortcut: '/refund', text: 'Two.' });
  t.same([twin.status, twin.body], [409, { detail: 'A canned reply /refund already exists.' }]);
  const other = (await client.post(BASE, { shortcut: 'other', text: 'Other.' })).body;
  const clash = await client.patch(`${BASE}/${other.id}`, { shortcut: 'refund' });
  t.same([clash.status, clash.body], [409, { detail: 'A canned reply /refund already exists.' }]);
  const badPatch = await client.patch(`${BASE}/${first.id}`, { text: '' });
  t.same([badPatch.status, badPatch.body], [400, { detail: 'text must not be empty.' }]);
  const badType = await client.patch(`${BASE}/${first.id}`, { shortcut: 1 });
  t.same([badType.status, badType.body], [400, { detail: 'shortcut must be a string.' }]);
  const missing = await client.patch(`${BASE}/${crypto.randomUUID()}`, { text: '' });
  t.same([missing.status, missing.body], [404, { detail: 'Canned reply not found.' }], '404 before 400');
  const malformed = await client.patch(`${BASE}/not-an-id`, { text: 'x' });
  t.same([malformed.status, malformed.body], [404, { detail: 'Canned reply not found.' }]);
});

t.test('at most 200 per owner', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  for (let i = 0; i < 200; i += 1) await services.cannedReplies.create(owner.id, { shortcut: `r${i}`, text: 'Hi.' });
  const over = await client.post(BASE, { shortcut: 'one-more', text: 'Too many.' });
  t.same([over.status, over.body], [400, { detail: 'Maximum 200 canned replies allowed.' }]);
  t.equal((await client.get(BASE)).body.length, 200);
});

t.test("isolation: another owner's reply is not found, and a session is needed", async (t) => {
  const a = await createOwner(gw.app);
  const secret = await services.cannedReplies.create(a.id, { shortcut: 'secret', text: "A's text." });
  const b = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  t.same((await b.get(BASE)).body, []);
  const notFound = [404, { detail: 'Canned reply not found.' }];
  const patched = await b.patch(`${BASE}/${secret.id}`, { text: 'Hijacked.' });
  t.same([patched.status, patched.body], notFound);
  const deleted = await b.del(`${BASE}/${secret.id}`);
  t.same([deleted.status, deleted.body], notFound);
  t.same(await services.cannedReplies.list(a.id), [secret], 'untouched');
  const anonymous = await new DashboardClient(gw.baseUrl).get(BASE);
  t.same([anonymous.status, anonymous.body], [401, { detail: 'Not signed in.' }]);
  const forged = await b.post(BASE, { shortcut: 'x', text: 'y' }, { 'x-csrf-token': 'forged' });
  t.same([forged.status, forged.body], [403, { detail: 'CSRF token missing or invalid.' }]);
});

t.test("agents read their owner's canned replies with their token: GET /agents/v1/canned-replies", async (t) => {
  const a = await createOwner(gw.app);
  const b = await createOwner(gw.app);
  const alice = await services.agents.create(a.id, 'Alice');
  const bella = await services.agents.create(b.id, 'Bella');
  const thanks = await services.cannedReplies.create(a.id, { shortcut: 'thanks', text: 'Thank you!' });
  const bye = await services.cannedReplies.create(a.id, { shortcut: 'bye', text: 'Goodbye.' });
  const read = (token: string) =>
    fetch(`${gw.baseUrl}/agents/v1/canned-replies`, { headers: { authorization: `Bearer ${token}` } });
  const res = await read(alice.token);
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.same(await res.json(), [
    { id: bye.id, shortcut: 'bye', text: 'Goodbye.' },
    { id: thanks.id, shortcut: 'thanks', text: 'Thank you!' },
  ]);
  const other = await read(bella.token);
  t.same([other.status, await other.json()], [200, []], "another owner's agent sees none of them");
  for (const token of ['ag_nope', '']) {
    const refused = await read(token);
    t.same([refused.status, await refused.json()], [401, { detail: 'Invalid agent token.' }]);
  }
  await services.agents.revoke(alice.id);
  const revoked = await read(alice.token);
  t.same([revoked.status, await revoked.json()], [401, { detail: 'Invalid agent token.' }]);
});

t.test('CLI: canned add, list, delete', async (t) => {
  const owner = await createOwner(gw.app);
  const added = await runCli(['canned', 'add', '--user', owner.id, '--shortcut', '/hi', '--text', 'Hello!'], cliEnv);
  t.equal(added.code, 0, added.stderr);
  const reply = JSON.parse(added.stdout);
  t.match(reply, { shortcut: 'hi', text: 'Hello!' });
  const twin = await runCli(['canned', 'add', '--user', owner.id, '--shortcut', 'hi', '--text', 'Again'], cliEnv);
  t.same([twin.code, twin.stderr], [1, 'A canned reply /hi already exists.\n']);
  const bad = await runCli(['canned', 'add', '--user', owner.id, '--shortcut', 'H I', '--text', 'x'], cliEnv);
  t.same([bad.code, bad.stderr], [1, `${SHORTCUT_RULE}\n`]);
  const listed = await runCli(['canned', 'list', '--user', owner.id], cliEnv);
  t.same(JSON.parse(listed.stdout), [reply]);
  const deleted = await runCli(['canned', 'delete', '--user', owner.id, '--reply', reply.id], cliEnv);
  t.same(JSON.parse(deleted.stdout), { id: reply.id, deleted: true });
  const gone = await runCli(['canned', 'delete', '--user', owner.id, '--reply', reply.id], cliEnv);
  t.same([gone.code, gone.stderr], [1, 'Canned reply not found.\n']);
  const nobody = await runCli(['canned', 'list', '--user', crypto.randomUUID()], cliEnv);
  t.same([nobody.code, nobody.stderr], [1, 'User not found.\n']);
});
