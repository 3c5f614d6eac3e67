// Issue 18: an ingestion's lease renewals ignored both errors and a "not held" answer, so a run that
// had lost its source to another process carried on and wrote its result over the other's.
import t from 'tap';
import { IngestionLease, IngestionLeaseLostError } from '../../src/actors/ingestion-lease.ts';
import type { IngestionClaim } from '../../src/store/ingestion-queue.ts';

const LEASE_MS = 30;

function setup(renew: () => Promise<boolean>) {
  let now = 1_000_000;
  const calls: number[] = [];
  const claim: IngestionClaim = {
    chatbotId: 'c',
    sourceId: 's',
    interrupted: 0,
    token: 't',
    until: now + LEASE_MS * 1000,
  };
  const errors: unknown[] = [];
  const lease = new IngestionLease(
    claim,
    {
      queue: {
        renew: (_claim, nowMicros) => {
          calls.push(nowMicros);
          return renew();
        },
      },
      clock: { nowMicros: () => now },
      leaseMs: LEASE_MS,
    },
    (error) => errors.push(error),
  );
  t.teardown(() => lease.stop());
  return { lease, calls, errors, advance: (ms: number) => (now += ms * 1000) };
}

/** Resolves once `check` holds, polling every few ms (bounded). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`never: ${what}`);
}

t.test('renewed a third of a lease apart while held; confirm renews at once', async (t) => {
  const { lease, calls } = setup(async () => true);
  await until(() => calls.length >= 3, 'three renewals');
  t.notOk(lease.signal.aborted);
  const before = calls.length;
  await lease.confirm();
  t.equal(calls.length, before + 1);
});

t.test('a lease another claim took back aborts the run at the next renewal', async (t) => {
  const { lease } = setup(async () => false);
  await until(() => lease.signal.aborted, 'aborted');
  t.ok(lease.signal.reason instanceof IngestionLeaseLostError);
  await t.rejects(lease.confirm(), IngestionLeaseLostError);
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
  const { lease, calls, errors, advance } = setup(async () => {
    throw new Error('Redis is not reachable');
  });
  await until(() => calls.length >= 3, 'three failed renewals');
  t.notOk(lease.signal.aborted, 'a blip does not stop the run');
  t.match(errors[0], { message: 'Redis is not reachable' });
  advance(LEASE_MS);
  await until(() => lease.signal.aborted, 'aborted once the lease ran out');
  t.ok(lease.signal.reason instanceof IngestionLeaseLostError);
});

t.test('a successful renewal moves the deadline on', async (t) => {
  let failing = false;
  const { lease, calls, advance } = setup(async () => {
    if (failing) throw new Error('Redis is not reachable');
    return true;
  });
  advance(LEASE_MS - 1);
  await until(() => calls.length >= 1, 'a renewal');
  failing = true;
  advance(LEASE_MS - 2);
  const seen = calls.length;
  await until(() => calls.length >= seen + 3, 'failed renewals within the renewed lease');
  t.notOk(lease.signal.aborted, 'still within the lease the last renewal gave');
});
