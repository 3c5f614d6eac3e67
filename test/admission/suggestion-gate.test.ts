import t from 'tap';
import { SuggestionGate } from '../../src/admission/suggestion-gate.ts';
import { RateLimitError } from '../../src/errors.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const agent = () => ({ id: crypto.randomUUID(), user_id: crypto.randomUUID() });
const BUSY = 'A suggestion is already being written for you; wait for it.';

/** The detail `work` is refused with (a RateLimitError), or 'admitted'. */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'admitted';
  } catch (error) {
    if (!(error instanceof RateLimitError)) throw error;
    return error.detail;
  }
}

t.test('one at a time per agent, counted in Redis: two gateways (two gates) agree', async (t) => {
  const limits = { limit: 10, windowMs: 60_000, holdMs: 60_000 };
  const gatewayA = new SuggestionGate(redis, keys, limits);
  const gatewayB = new SuggestionGate(redis, keys, limits);
  const alice = agent();
  const release = await gatewayA.admit(alice);
  t.equal(await outcome(gatewayB.admit(alice)), BUSY, 'the other gateway sees the suggestion being written');
  t.equal(await outcome(gatewayA.admit(alice)), BUSY);
  t.equal(await outcome(gatewayB.admit(agent())), 'admitted', 'another agent is not held up');
  await release();
  const next = await gatewayB.admit(alice);
  await release();
  t.equal(await outcome(gatewayA.admit(alice)), BUSY, 'an old release does not end a newer suggestion');
  await next();
  t.equal(await outcome(gatewayA.admit(alice).then((end) => end())), 'admitted');
});

t.test('so many per window; refusals are not counted', async (t) => {
  const gate = new SuggestionGate(redis, keys, { limit: 3, windowMs: 60_000, holdMs: 60_000 });
  const bob = agent();
  for (let i = 0; i < 3; i += 1) await (await gate.admit(bob))();
  const limited = 'Suggestion rate limit exceeded. Max 3 per minute.';
  t.equal(await outcome(gate.admit(bob)), limited);
  t.equal(await outcome(gate.admit(bob)), limited);
  t.equal(await redis.zCard(keys.suggestionWindow(bob.user_id, bob.id)), 3, 'only admitted suggestions are kept');
  t.equal(await redis.exists(keys.suggestionBusy(bob.user_id, bob.id)), 0, 'a refusal takes no hold');
});

t.test('a hold whose gateway died lapses; the window slides', async (t) => {
  const gate = new SuggestionGate(redis, keys, { limit: 1, windowMs: 1000, holdMs: 150 });
  const carol = agent();
  // Real time: Redis lapses the hold and slides the window by its own clock.
  const admittedAt = Date.now();
  await gate.admit(carol); // never released
  t.equal(await outcome(gate.admit(carol)), BUSY);
  await until(async () => (await redis.exists(keys.suggestionBusy(carol.user_id, carol.id))) === 0, 'the lapse');
  t.equal(await outcome(gate.admit(carol)), 'Suggestion rate limit exceeded. Max 1 per 1 s.');
  // Refusals are not counted: asking until admitted leaves the window as it was.
  await until(async () => (await outcome(gate.admit(carol).then((end) => end()))) === 'admitted', 'the slide');
  t.ok(Date.now() - admittedAt >= 1000, 'admitted again once the first admission left the window');
  t.throws(() => new SuggestionGate(redis, keys, { limit: 0, windowMs: 1, holdMs: 1 }), {
    message: 'limit must be a positive integer',
  });
});
