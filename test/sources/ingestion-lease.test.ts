// Issue 18: an ingestion's lease renewals ignored both errors and a "not held" answer, so a run that
// had lost its source to another process carried on and wrote its result over the other's.
import t from 'tap';
import { IngestionLease, IngestionLeaseLostError } from '../../src/sources/ingestion-lease.ts';
import type { IngestionClaim } from '../../src/store/ingestion-queue.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

/** A lease of 30 s, renewed every 10 s. */
const LEASE_MS = 30_000;
const RENEW_MS = LEASE_MS / 3;

function setup(renew: () => Promise<boolean>) {
  const clock = new SimulatedClock();
  const start = clock.nowMicros();
  /** When (ms after the claim) each renewal asked Redis. */
  const calls: number[] = [];
  const claim: IngestionClaim = {
    chatbotId: 'c',
    sourceId: 's',
    interrupted: 0,
    token: 't',
    until: start + LEASE_MS * 1000,
  };
  const errors: unknown[] = [];
  const lease = new IngestionLease(
    claim,
    {
      queue: {
        renew: (_claim, nowMicros) => {
          calls.push((nowMicros - start) / 1000);
          return renew();
        },
      },
      clock,
      leaseMs: LEASE_MS,
    },
    (error) => errors.push(error),
  );
  t.teardown(() => lease.stop());
  return { lease, clock, calls, errors };
}

t.test('renewed a third of a lease apart while held; confirm renews at once', async (t) => {
  const { lease, clock, calls } = setup(async () => true);
  await clock.advance(RENEW_MS - 1);
  t.same(calls, [], 'not before a third of the lease');
  await clock.advance(1 + 2 * RENEW_MS);
  t.same(calls, [RENEW_MS, 2 * RENEW_MS, 3 * RENEW_MS]);
  t.notOk(lease.signal.aborted);
  await clock.advance(5);
  await lease.confirm();
  t.same(calls, [RENEW_MS, 2 * RENEW_MS, 3 * RENEW_MS, 3 * RENEW_MS + 5]);
  lease.stop();
  await clock.advance(LEASE_MS);
  t.equal(calls.length, 4, 'no renewal once stopped');
  t.equal(clock.pending, 0);
});

t.test('a lease another claim took back aborts the run at the next renewal', async (t) => {
  const { lease, clock, calls } = setup(async () => false);
  await clock.advance(RENEW_MS - 1);
  t.notOk(lease.signal.aborted);
  await clock.advance(1);
  t.ok(lease.signal.aborted, 'aborted at the first renewal');
  t.ok(lease.signal.reason instanceof IngestionLeaseLostError);
  await t.rejects(lease.confirm(), IngestionLeaseLostError);
  await clock.advance(LEASE_MS);
  t.same(calls, [RENEW_MS], 'renewals stop with the run');
  t.equal(clock.pending, 0);
});

t.test('confirm throws at once when Redis says the lease is gone', async (t) => {
  let held = true;
  const { lease } = setup(async () => held);
  await lease.confirm();
  held = false;
  await t.rejects(lease.confirm(), { name: 'IngestionLeaseLostError', message: 'the ingestion lease was lost' });
  t.ok(lease.signal.aborted);
});

t.test('failed renewals are reported and tolerated while time is left, then the run stops', async (t) => {
  const { lease, clock, calls, errors } = setup(async () => {
    throw new Error('Redis is not reachable');
  });
  await clock.advance(2 * RENEW_MS);
  t.same(calls, [RENEW_MS, 2 * RENEW_MS]);
  t.notOk(lease.signal.aborted, 'a blip does not stop the run');
  t.equal(errors.length, 2);
  t.match(errors[0], { message: 'Redis is not reachable' });
  await clock.advance(RENEW_MS);
  t.ok(lease.signal.aborted, 'aborted once the lease ran out, at the renewal that failed then');
  t.ok(lease.signal.reason instanceof IngestionLeaseLostError);
  t.equal(errors.length, 3);
});

t.test('a successful renewal moves the deadline on', async (t) => {
  let failing = false;
  const { lease, clock, calls } = setup(async () => {
    if (failing) throw new Error('Redis is not reachable');
    return true;
  });
  await clock.advance(RENEW_MS);
  t.same(calls, [RENEW_MS], 'renewed: held until 40 s');
  failing = true;
  await clock.advance(2 * RENEW_MS);
  t.same(calls, [RENEW_MS, 2 * RENEW_MS, 3 * RENEW_MS]);
  t.notOk(lease.signal.aborted, 'at 30 s, past the claim but within the lease the renewal gave');
  await clock.advance(RENEW_MS);
  t.ok(lease.signal.aborted, 'at 40 s that lease ran out too');
});
