import t from 'tap';
import { MAX_CANNED_REPLIES } from '../../src/agents/canned-reply.ts';
import { ConflictError, LimitError } from '../../src/errors.ts';
import type { Signal } from '../../src/redis/signal-bus.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { CannedReplyStore } from '../../src/store/canned-reply-store.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const clock = new SimulatedClock(Date.UTC(2026, 10, 21, 13, 5) * 1000);
const signals: Signal[] = [];
const store = new CannedReplyStore(redis, keys, clock, { publish: async (signal) => void signals.push(signal) });

/** An owner account, as far as the store looks: its record exists. */
async function owner(): Promise<string> {
  const id = crypto.randomUUID();
  await redis.hSet(keys.user(id), { id, email: `${id}@example.com` });
  return id;
}

/** The error `work` rejects with, as [class name, detail]. */
async function refusal(work: Promise<unknown>): Promise<[string, string]> {
  try {
    await work;
  } catch (error) {
    return [(error as Error).name, (error as { detail?: string }).detail ?? String(error)];
  }
  throw new Error('it was not refused');
}

t.test('create, list by shortcut, get, update, delete; each change is signalled to the owner', async (t) => {
  const user = await owner();
  signals.length = 0;
  const refund = await store.create(user, { shortcut: '/refund', text: 'Refunds take 5 days.' });
  t.same(refund, {
    id: refund.id,
    shortcut: 'refund',
    text: 'Refunds take 5 days.',
    created_at: '2026-11-21T13:05:00.000000+00:00',
    updated_at: '2026-11-21T13:05:00.000000+00:00',
  });
  await clock.advance(1500);
  const hours = await store.create(user, { shortcut: ' hours_2-b ', text: 'We are open 9 to 5.\nMonday to Friday.' });
  t.equal(hours.shortcut, 'hours_2-b', 'trimmed');
  t.same(
    (await store.list(user)).map((reply) => reply.shortcut),
    ['hours_2-b', 'refund'],
  );
  t.same(await store.get(user, refund.id.toUpperCase()), refund, 'an id in capitals names the same reply');

  await clock.advance(1000);
  const renamed = await store.update(user, refund.id, { shortcut: 'money-back' });
  t.same(renamed, { ...refund, shortcut: 'money-back', updated_at: '2026-11-21T13:05:02.500000+00:00' });
  const retexted = await store.update(user, refund.id, { text: 'Refunds take 3 days. 💸 "quoted" / \\ ok' });
  t.equal(retexted.text, 'Refunds take 3 days. 💸 "quoted" / \\ ok', 'text survives the script unchanged');
  t.equal(retexted.shortcut, 'money-back');
  t.same(await store.update(user, refund.id, {}), retexted, 'nothing to change changes nothing but the time');
  t.same(await store.get(user, refund.id), retexted);
  const reused = await store.create(user, { shortcut: 'refund', text: 'The old shortcut is free again.' });
  t.equal(reused.shortcut, 'refund');

  await store.delete(user, refund.id);
  t.same(await refusal(store.get(user, refund.id)), ['NotFoundError', 'Canned reply not found.']);
  t.same(await refusal(store.delete(user, refund.id)), ['NotFoundError', 'Canned reply not found.']);
  const again = await store.create(user, { shortcut: 'money-back', text: 'Its shortcut was freed by the delete.' });
  t.equal(again.shortcut, 'money-back');
  t.same(
    (await store.list(user)).map((reply) => reply.shortcut),
    ['hours_2-b', 'money-back', 'refund'],
  );
  t.equal(signals.length, 8, 'every change, and nothing else, was signalled');
  t.ok(signals.every((signal) => signal.kind === 'canned-replies' && signal.user_id === user));
});

t.test('the shortcut and text rules', async (t) => {
  const user = await owner();
  const text = 'Hello.';
  const SHORTCUT_RULE = 'shortcut must be 1 to 32 characters of a-z, 0-9, - and _.';
  for (const [shortcut, detail] of [
    [undefined, 'shortcut is required.'],
    [null, 'shortcut is required.'],
    [7, 'shortcut must be a string.'],
    ['', SHORTCUT_RULE],
    ['/', SHORTCUT_RULE],
    ['//refund', SHORTCUT_RULE],
    ['Refund', SHORTCUT_RULE],
    ['re fund', SHORTCUT_RULE],
    ['réfund', SHORTCUT_RULE],
    ['refund!', SHORTCUT_RULE],
    ['a'.repeat(33), SHORTCUT_RULE],
  ] as const) {
    t.same(await refusal(store.create(user, { shortcut, text })), ['ValidationError', detail], String(shortcut));
  }
  t.equal((await store.create(user, { shortcut: 'a'.repeat(32), text })).shortcut, 'a'.repeat(32));
  for (const [value, detail] of [
    [undefined, 'text is required.'],
    [12, 'text must be a string.'],
    ['  \n ', 'text must not be empty.'],
    ['x'.repeat(4001), 'text must be at most 4000 characters.'],
  ] as const) {
    t.same(await refusal(store.create(user, { shortcut: 'ok', text: value })), ['ValidationError', detail]);
  }
  const longest = await store.create(user, { shortcut: 'long', text: '😀'.repeat(4000) });
  t.equal([...longest.text].length, 4000, '4,000 characters, counted as characters, not UTF-16 units');
  const lone = await store.create(user, { shortcut: 'lone', text: 'half \ud83d of a pair' });
  t.equal(lone.text, 'half \ufffd of a pair', 'a lone surrogate is replaced');
  t.equal((await store.update(user, lone.id, { shortcut: 'lone-2' })).text, 'half \ufffd of a pair');
  t.same(await refusal(store.update(user, lone.id, { text: '' })), ['ValidationError', 'text must not be empty.']);
  t.same(await refusal(store.update(user, lone.id, { shortcut: 'BAD' })), ['ValidationError', SHORTCUT_RULE]);
  t.same(await refusal(store.create(crypto.randomUUID(), { shortcut: 'x', text })), [
    'NotFoundError',
    'User not found.',
  ]);
});

t.test('a shortcut names one reply per owner; other owners may use it', async (t) => {
  const ann = await owner();
  const bob = await owner();
  const first = await store.create(ann, { shortcut: 'refund', text: 'One.' });
  const taken = ['ConflictError', 'A canned reply /refund already exists.'];
  t.same(await refusal(store.create(ann, { shortcut: '/refund', text: 'Two.' })), taken);
  const other = await store.create(ann, { shortcut: 'other', text: 'Other.' });
  t.same(await refusal(store.update(ann, other.id, { shortcut: 'refund', text: 'Changed?' })), taken);
  t.equal((await store.get(ann, other.id)).text, 'Other.', 'a refused change changes nothing');
  t.same(await store.update(ann, first.id, { shortcut: 'refund' }).then((r) => r.shortcut), 'refund', 'its own');
  t.equal((await store.create(bob, { shortcut: 'refund', text: "Bob's." })).shortcut, 'refund');

  // Ten creates of one shortcut at once: exactly one wins.
  const racing = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) => store.create(ann, { shortcut: 'race', text: `Racer ${i}.` })),
  );
  t.equal(racing.filter((outcome) => outcome.status === 'fulfilled').length, 1);
  t.ok(
    racing.every((outcome) => outcome.status === 'fulfilled' || outcome.reason instanceof ConflictError),
    'the others are told it exists',
  );
});

t.test("isolation: an owner never reads, changes or deletes another owner's reply", async (t) => {
  const ann = await owner();
  const bob = await owner();
  const anns = await store.create(ann, { shortcut: 'secret', text: "Ann's text." });
  const notFound = ['NotFoundError', 'Canned reply not found.'];
  t.same(await refusal(store.get(bob, anns.id)), notFound);
  t.same(await refusal(store.update(bob, anns.id, { text: 'Hijacked.' })), notFound);
  t.same(await refusal(store.delete(bob, anns.id)), notFound);
  for (const id of ['nope', '', 42, null, `${anns.id}x`]) {
    t.same(await refusal(store.get(ann, id)), notFound, String(id));
    t.same(await refusal(store.update(ann, id, { text: 'x' })), notFound);
    t.same(await refusal(store.delete(ann, id)), notFound);
  }
  t.same(await store.list(bob), []);
  t.same(await store.get(ann, anns.id), anns, 'untouched');
});

t.test(`at most ${MAX_CANNED_REPLIES} per owner, exactly, under concurrent creates`, async (t) => {
  const user = await owner();
  for (let i = 0; i < MAX_CANNED_REPLIES - 5; i += 1)
    await store.create(user, { shortcut: `r${i}`, text: `Reply ${i}.` });
  const burst = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) => store.create(user, { shortcut: `burst${i}`, text: 'Burst.' })),
  );
  t.equal(burst.filter((outcome) => outcome.status === 'fulfilled').length, 5);
  for (const outcome of burst) {
    if (outcome.status === 'rejected') {
      t.ok(outcome.reason instanceof LimitError);
      t.equal((outcome.reason as LimitError).detail, 'Maximum 200 canned replies allowed.');
    }
  }
  t.equal((await store.list(user)).length, MAX_CANNED_REPLIES);
  const [first] = await store.list(user);
  await store.delete(user, first!.id);
  t.equal((await store.create(user, { shortcut: 'room', text: 'There is room again.' })).shortcut, 'room');
});
