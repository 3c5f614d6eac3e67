import t from 'tap';
import { startGateway } from '../support/gateway.ts';
import { createOwner, DashboardClient, PASSWORD } from '../support/dashboard-client.ts';

// A gateway of its own: every attempt of this file comes from 127.0.0.1 and counts toward its limit.
// Five sign-ins may be checked at once from that address, so the windows alone decide below.
const gw = await startGateway({
  LOGIN_ATTEMPTS_PER_EMAIL: '3',
  LOGIN_ATTEMPTS_PER_ADDRESS: '6',
  LOGIN_CONCURRENT_PER_ADDRESS: '5',
});
t.teardown(() => gw.stop());

const attempt = (email: string, password: string) =>
  new DashboardClient(gw.baseUrl).post('/dashboard/api/session', { email, password });
const LIMITED = { detail: 'Too many sign-in attempts. Try again in 15 minutes.' };

t.test('failed sign-ins are limited per email from one client; successful ones do not count', async (t) => {
  const owner = await createOwner(gw.app);
  for (let i = 0; i < 4; i += 1) t.equal((await attempt(owner.email, PASSWORD)).status, 200, 'success is free');
  const failures = await Promise.all([1, 2, 3, 4, 5].map(() => attempt(owner.email, 'not the password')));
  t.same(
    failures.map((res) => res.status).sort(),
    [401, 401, 401, 429, 429],
    'concurrent guesses cannot slip past the limit',
  );
  const limited = failures.find((res) => res.status === 429)!;
  t.same(limited.body, LIMITED);
  t.equal(limited.headers.get('retry-after'), null);
  const right = await attempt(owner.email.toUpperCase(), PASSWORD);
  t.same(
    [right.status, right.body],
    [429, LIMITED],
    'from that client even the right password waits, whatever its case',
  );
  const other = await createOwner(gw.app);
  t.equal((await attempt(other.email, PASSWORD)).status, 200, 'other emails are not affected');
});

t.test('failed sign-ins are limited per client address across emails', async (t) => {
  // Three failures were counted for this address by the test above; three more reach its limit of six.
  for (let i = 0; i < 3; i += 1) {
    t.equal((await attempt(`guess-${i}@example.com`, 'whatever it is')).status, 401);
  }
  const owner = await createOwner(gw.app);
  const res = await attempt(owner.email, PASSWORD);
  t.same([res.status, res.body], [429, LIMITED]);
});
