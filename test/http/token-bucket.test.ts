import t from 'tap';
import { TokenBucket, type BucketVerdict } from '../../src/http/token-bucket.ts';

let now = 1_795_000_000_000_000;
const clock = { nowMicros: () => now };
const take = (bucket: TokenBucket, n: number): BucketVerdict[] => Array.from({ length: n }, () => bucket.take());

t.test('a burst is accepted at once; what follows is dropped until a whole burst of debt closes', async (t) => {
  const bucket = new TokenBucket(2, 3, clock);
  t.same(take(bucket, 3), ['accept', 'accept', 'accept']);
  t.same(take(bucket, 3), ['drop', 'drop', 'close'], 'the sixth frame at once puts it a burst in debt');
});

t.test('tokens come back at the rate, up to the burst; dropped frames must be paid back first', async (t) => {
  const bucket = new TokenBucket(2, 3, clock);
  take(bucket, 3);
  now += 500_000;
  t.same(take(bucket, 2), ['accept', 'drop'], 'half a second at 2/s is one frame');
  now += 500_000;
  t.same(take(bucket, 1), ['drop'], 'the dropped frame is paid back first');
  now += 1_000_000;
  t.same(take(bucket, 2), ['accept', 'drop']);
  now += 60_000_000;
  t.same(take(bucket, 4), ['accept', 'accept', 'accept', 'drop'], 'never more than the burst saved up');
});

t.test('a rate kept above the limit ends in close, one at the limit never does', async (t) => {
  const over = new TokenBucket(10, 5, clock);
  const verdicts: BucketVerdict[] = [];
  for (let i = 0; i < 100 && !verdicts.includes('close'); i += 1) {
    now += 50_000; // 20 frames a second against 10
    verdicts.push(over.take());
  }
  t.equal(verdicts.at(-1), 'close');
  t.equal(verdicts.length, 19, 'from 5 saved to 5 in debt at half a token lost a frame: 19 frames');
  const steady = new TokenBucket(10, 5, clock);
  for (let i = 0; i < 1000; i += 1) {
    now += 100_000;
    if (steady.take() !== 'accept') return t.fail(`frame ${i} refused at exactly the rate`);
  }
  t.pass('1000 frames at exactly the rate all accepted');
});

t.test('a clock that steps back adds nothing', async (t) => {
  const bucket = new TokenBucket(1, 1, clock);
  t.equal(bucket.take(), 'accept');
  now -= 10_000_000;
  t.equal(bucket.take(), 'close', 'no tokens from going back in time: one frame of debt is a whole burst of 1');
  now += 10_000_000;
});

t.test('bad limits throw at once', async (t) => {
  t.throws(() => new TokenBucket(0, 3, clock), { message: 'ratePerSecond must be positive, got 0' });
  t.throws(() => new TokenBucket(1, 0, clock), { message: 'burst must be an integer ≥ 1, got 0' });
  t.throws(() => new TokenBucket(1, 1.5, clock), { message: 'burst must be an integer ≥ 1, got 1.5' });
});
