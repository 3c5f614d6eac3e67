import { createClient } from 'redis';
import t from 'tap';
import { addressKey } from '../../src/admission/login-gate.ts';
import { startGateway, type TestGateway } from '../support/gateway.ts';
import { DashboardClient } from '../support/dashboard-client.ts';

// Sign-in limits count per client address. Every request of this file comes from 127.0.0.1, as every
// request reaches a gateway from its reverse proxy's address; X-Forwarded-For names the client.
const LIMITS = { LOGIN_ATTEMPTS_PER_EMAIL: '100', LOGIN_ATTEMPTS_PER_ADDRESS: '2' };
const LIMITED = { detail: 'Too many sign-in attempts. Try again in 15 minutes.' };

const behindProxy = await startGateway({ ...LIMITS, TRUSTED_PROXIES: 'private' });
const direct = await startGateway(LIMITS);
t.teardown(async () => {
  await behindProxy.stop();
  await direct.stop();
});

/** A failing sign-in (unknown email) whose request carries the given X-Forwarded-For. */
async function attempt(gw: TestGateway, forwardedFor?: string): Promise<number> {
  const headers: Record<string, string> = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  const email = `nobody-${crypto.randomUUID()}@example.com`;
  const res = await new DashboardClient(gw.baseUrl).post('/dashboard/api/session', { email, password: 'x' }, headers);
  if (res.status === 429) t.same(res.body, LIMITED);
  else t.same([res.status, res.body], [401, { detail: 'Email or password is incorrect.' }]);
  return res.status;
}

/** The client addresses the gateway counted sign-in attempts for. */
async function countedAddresses(gw: TestGateway): Promise<Record<string, number>> {
  const redis = await createClient({ url: gw.redis.url }).connect();
  const counted: Record<string, number> = {};
  for (const key of await redis.keys('sb:{login}:addr:*')) {
    counted[key.slice('sb:{login}:addr:'.length)] = await redis.zCard(key);
  }
  redis.destroy();
  return counted;
}

t.test('behind a trusted proxy one client reaching its limit does not lock out the others', async (t) => {
  t.equal(await attempt(behindProxy, '203.0.113.7'), 401);
  t.equal(await attempt(behindProxy, '198.51.100.1, 203.0.113.7'), 401, 'a forged entry on the left changes nothing');
  t.equal(await attempt(behindProxy, '203.0.113.7'), 429, 'that client is limited');
  t.equal(await attempt(behindProxy, '203.0.113.7, 10.0.0.2'), 429, 'through a second proxy too');
  t.equal(await attempt(behindProxy, '203.0.113.8'), 401, 'another client is not');
  t.equal(await attempt(behindProxy), 401, 'without the header, the proxy itself');
  t.same(await countedAddresses(behindProxy), { '203.0.113.7': 2, '203.0.113.8': 1, '127.0.0.1': 1 });
});

t.test('IPv6 clients are counted per /64', async (t) => {
  t.equal(await attempt(behindProxy, '2001:db8:1:2::1'), 401);
  t.equal(await attempt(behindProxy, '2001:db8:1:2:aaaa:bbbb:cccc:dddd'), 401);
  t.equal(await attempt(behindProxy, '2001:db8:1:2:ffff::9'), 429, 'a new address of the same /64 is limited');
  t.equal(await attempt(behindProxy, '2001:db8:1:3::1'), 401, 'the next /64 is not');
  const counted = await countedAddresses(behindProxy);
  t.same([counted['2001:db8:1:2::/64'], counted['2001:db8:1:3::/64']], [2, 1]);

  t.equal(addressKey('203.0.113.7'), '203.0.113.7');
  t.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:0db8:0001:0002::'), '2001:db8:1:2::/64');
  t.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
  t.equal(addressKey('fe80::1%eth0'), 'fe80::/64');
  t.equal(addressKey('unknown'), 'unknown');
});

t.test('without TRUSTED_PROXIES the header is ignored: every attempt is the peer', async (t) => {
  t.equal(await attempt(direct, '203.0.113.7'), 401);
  t.equal(await attempt(direct, '203.0.113.8'), 401);
  t.equal(await attempt(direct, '203.0.113.9'), 429, 'a made-up header does not buy a fresh limit');
  t.same(await countedAddresses(direct), { '127.0.0.1': 2 });
});
