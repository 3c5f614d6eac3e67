import { createClient } from 'redis';
import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { AuthenticationError } from '../../src/errors.ts';
import { OwnerAuth } from '../../src/dashboard/owner-auth.ts';
import {
  decoyHash,
  PASSWORD_WORK_CONCURRENCY,
  PASSWORD_WORK_QUEUE,
  passwordWorkLoad,
} from '../../src/dashboard/password-hash.ts';
import { createLogger } from '../../src/logger.ts';
import { InviteStore } from '../../src/store/invite-store.ts';
import { LoginGate } from '../../src/admission/login-gate.ts';
import { PasswordStore } from '../../src/store/password-store.ts';
import { SetupStore } from '../../src/store/setup-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { createOwner, DashboardClient, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { parseArguments } from '../support/slot-monitor.ts';
import { until } from '../support/until.ts';

// Every sign-in of this file comes from 127.0.0.1: the burst below may be checked all at once.
const gw = await startGateway({ LOGIN_CONCURRENT_PER_ADDRESS: '10' });
// Two more processes' clients, each with its own client-side cache, like two gateways (or the CLI).
const reader = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
const writer = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
t.teardown(async () => {
  await reader.close();
  await writer.close();
  await gw.stop();
});
const { services } = gw.app;
const { keys } = services;

/**
 * The commands Redis ran on an owner's password, invitation and session keys while `action` ran, in
 * order, as MONITOR saw them: `lua ` marks a command a script ran; the keys are named by role.
 */
async function credentialCommands(userId: string, action: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const monitor = await createClient({ url: gw.redis.url }).connect();
  await monitor.monitor((line: string) => lines.push(line));
  await action();
  const marker = `done-${crypto.randomUUID()}`;
  await writer.sendCommand(['ECHO', marker]);
  await until(() => lines.some((line) => line.includes(marker)), 'MONITOR to catch up');
  monitor.destroy();
  const sessionPrefix = keys.dashboardSession(userId, '');
  const role = (arg: string) =>
    ({ [keys.password(userId)]: 'password', [keys.dashboardSessionsOf(userId)]: 'sessions' })[arg] ??
    (arg === keys.invite(userId) ? 'invite' : arg.startsWith(sessionPrefix) && arg !== sessionPrefix ? 'session' : '');
  const commands: string[] = [];
  for (const line of lines) {
    const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
    if (!match) continue;
    const [name = '', ...args] = parseArguments(match[2]!);
    const roles = args.map(role).filter(Boolean);
    if (roles.length > 0) commands.push(`${match[1] === 'lua' ? 'lua ' : ''}${name.toLowerCase()} ${roles.join(',')}`);
  }
  return commands;
}

t.test('a new password and the end of every session are one script', async (t) => {
  const owner = await createOwner(gw.app);
  const laptop = await DashboardClient.signIn(gw.baseUrl, owner);
  const phone = await DashboardClient.signIn(gw.baseUrl, owner);
  const commands = await credentialCommands(owner.id, () =>
    services.ownerAuth.setPassword(owner.id, 'a brand new passphrase'),
  );
  t.same(commands, [
    'evalsha password,sessions',
    'lua set password',
    'lua smembers sessions',
    'lua del session',
    'lua del session',
    'lua del sessions',
  ]);
  for (const client of [laptop, phone]) t.equal((await client.get('/dashboard/api/session')).status, 401);
});

t.test('an accepted invitation is used up, sets the password and ends the sessions in one script', async (t) => {
  const owner = await createOwner(gw.app);
  const before = await DashboardClient.signIn(gw.baseUrl, owner);
  const invite = await services.ownerAuth.invite(owner.id, gw.baseUrl);
  const token = invite.url.split('#/invite/')[1]!;
  const commands = await credentialCommands(owner.id, () =>
    services.ownerAuth.acceptInvite(token, 'the invited passphrase'),
  );
  t.same(commands, [
    'get invite', // still pending? (before the slow hash)
    'evalsha password,sessions,invite',
    'lua get invite',
    'lua del invite',
    'lua set password',
    'lua smembers sessions',
    'lua del session',
    'lua del sessions',
    // The new session, opened only while that password holds.
    'evalsha session,sessions,password',
    'lua get password',
    'lua smembers sessions',
    'lua hset session',
    'lua pexpire session',
    'lua sadd sessions',
  ]);
  t.equal((await before.get('/dashboard/api/session')).status, 401, 'the session from before ended');
  await DashboardClient.signIn(gw.baseUrl, { ...owner, password: 'the invited passphrase' });
});

t.test('a sign-in whose password changed while it was checked opens no session', async (t) => {
  const owner = await createOwner(gw.app);
  const passwords = new PasswordStore(reader, keys);
  // The owner changes the password right after this sign-in read the old hash (while its scrypt
  // work waits or runs): the old password matches what was read, yet no session may come of it.
  const racing = new OwnerAuth({
    accounts: services.accounts,
    passwords: Object.assign(Object.create(passwords) as PasswordStore, {
      get: async (userId: string) => {
        const stored = await passwords.get(userId);
        await services.ownerAuth.setPassword(userId, 'changed meanwhile!');
        return stored;
      },
    }),
    sessions: services.sessions,
    invites: new InviteStore(reader, keys, systemClock),
    setup: new SetupStore(reader, keys),
    defaultPlan: 'free',
    loginGate: new LoginGate(reader, keys, {
      perEmailAndAddress: 10,
      perAddress: 10,
      windowMs: 60_000,
      concurrentPerAddress: 2,
      inFlightMs: 60_000,
    }),
  });
  await t.rejects(
    racing.signIn(owner.email, PASSWORD, '192.0.2.1'),
    new AuthenticationError('Email or password is incorrect.'),
  );
  t.equal(await reader.exists(keys.dashboardSessionsOf(owner.id)), 0, 'no session was opened');
  await DashboardClient.signIn(gw.baseUrl, { ...owner, password: 'changed meanwhile!' });
});

t.test('passwords and invitations are read from Redis, never from a cache that missed a change', async (t) => {
  // Another process changes the credential right after this one read it (and cached the read): the
  // next read must see the change, though the invalidation may not have reached this process yet.
  const owner = await createOwner(gw.app);
  const reading = { passwords: new PasswordStore(reader, keys), invites: new InviteStore(reader, keys, systemClock) };
  const writing = { passwords: new PasswordStore(writer, keys), invites: new InviteStore(writer, keys, systemClock) };
  const rounds = 200;
  let stalePasswords = 0;
  let staleInvites = 0;
  for (let i = 0; i < rounds; i += 1) {
    await reading.passwords.get(owner.id);
    await writing.passwords.set(owner.id, `hash-${i}`);
    if ((await reading.passwords.get(owner.id)) !== `hash-${i}`) stalePasswords += 1;

    const older = await writing.invites.create(owner.id, 3600);
    if (!(await reading.invites.find(older.token))) staleInvites += 1;
    const newer = await writing.invites.create(owner.id, 3600);
    if (await reading.invites.find(older.token)) staleInvites += 1;
    if (!(await reading.invites.find(newer.token))) staleInvites += 1;
  }
  t.same({ stalePasswords, staleInvites }, { stalePasswords: 0, staleInvites: 0 }, `${rounds} rounds`);
});

t.test('a burst of sign-ins queues for scrypt two at a time, and every answer is still right', async (t) => {
  const owner = await createOwner(gw.app);
  const attempts = [
    { email: owner.email, password: PASSWORD },
    { email: `nobody-${crypto.randomUUID()}@example.com`, password: PASSWORD },
    { email: owner.email, password: 'not the password at all' },
  ];
  let peak = { running: 0, waiting: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const load = passwordWorkLoad();
      peak = { running: Math.max(peak.running, load.running), waiting: Math.max(peak.waiting, load.waiting) };
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  // As many as a process takes at once (two running, four waiting); the unknown email's decoy hash
  // is made beforehand, or its making would take a place.
  await decoyHash();
  const burst = PASSWORD_WORK_CONCURRENCY + PASSWORD_WORK_QUEUE;
  const answers = await Promise.all(
    Array.from({ length: burst }, async (_, i) => {
      const res = await new DashboardClient(gw.baseUrl).post('/dashboard/api/session', attempts[i % 3]);
      return [res.status, res.status === 200 ? res.body.user.email : res.body.detail];
    }),
  );
  sampling = false;
  await sampler;
  const refused = [401, 'Email or password is incorrect.'];
  t.same(
    answers,
    Array.from({ length: burst / 3 }).flatMap(() => [[200, owner.email], refused, refused]),
  );
  t.equal(peak.running, 2, 'two scrypt computations at a time, never more');
  t.ok(peak.waiting > 0, `the others waited their turn (up to ${peak.waiting} at once)`);
});
