import t from 'tap';
import { SimulatedClock } from './simulated-clock.ts';

const START = 1_000_000_000_000;

t.test('time stands still until advanced, then moves by exactly what was asked', async (t) => {
  const clock = new SimulatedClock(START);
  t.equal(clock.nowMicros(), START);
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal(clock.nowMicros(), START, 'real time passing does not move it');
  await clock.advance(1500);
  t.equal(clock.nowMicros(), START + 1_500_000);
  await clock.advance(0.25);
  t.equal(clock.nowMicros(), START + 1_500_250);
  t.equal(new SimulatedClock().nowMicros(), 1_800_000_000_000_000, 'a fixed default start');
});

t.test('timeouts fire in due order, each at its due time, none before it', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: Array<[string, number]> = [];
  const at = (name: string) => () => fired.push([name, (clock.nowMicros() - START) / 1000]);
  clock.setTimeout(at('c'), 300);
  clock.setTimeout(at('a'), 100);
  clock.setTimeout(at('b1'), 200);
  clock.setTimeout(at('b2'), 200);
  t.equal(clock.pending, 4);
  await clock.advance(99);
  t.same(fired, [], 'nothing before it is due');
  await clock.advance(1);
  t.same(fired, [['a', 100]]);
  await clock.advance(1000);
  t.same(
    fired,
    [
      ['a', 100],
      ['b1', 200],
      ['b2', 200],
      ['c', 300],
    ],
    'ties in the order they were scheduled',
  );
  t.equal(clock.nowMicros(), START + 1_100_000, 'then the time the advance was for');
  t.equal(clock.pending, 0);
});

t.test('a timer scheduled by a firing one fires in the same advance when due within it', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: number[] = [];
  const stamp = () => fired.push((clock.nowMicros() - START) / 1000);
  clock.setTimeout(() => {
    stamp();
    clock.setTimeout(stamp, 50);
    clock.setTimeout(stamp, 500);
  }, 10);
  await clock.advance(100);
  t.same(fired, [10, 60]);
  t.equal(clock.pending, 1);
  await clock.advance(410);
  t.same(fired, [10, 60, 510]);
});

t.test('intervals fire every period until cleared, also from their own callback', async (t) => {
  const clock = new SimulatedClock(START);
  const ticks: number[] = [];
  const interval = clock.setInterval(() => ticks.push((clock.nowMicros() - START) / 1000), 30);
  await clock.advance(100);
  t.same(ticks, [30, 60, 90]);
  clock.clearTimer(interval);
  await clock.advance(100);
  t.same(ticks, [30, 60, 90], 'nothing once cleared');
  t.equal(clock.pending, 0);

  let count = 0;
  const selfStopping = clock.setInterval(() => {
    count += 1;
    if (count === 2) clock.clearTimer(selfStopping);
  }, 10);
  await clock.advance(100);
  t.equal(count, 2);
  t.equal(clock.pending, 0);
});

t.test('clearTimer cancels a pending timeout; a fired, cleared or undefined one is a no-op', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: string[] = [];
  const cancelled = clock.setTimeout(() => fired.push('cancelled'), 10);
  const kept = clock.setTimeout(() => fired.push('kept'), 10);
  clock.clearTimer(cancelled);
  t.equal(clock.pending, 1);
  await clock.advance(10);
  t.same(fired, ['kept']);
  clock.clearTimer(kept);
  clock.clearTimer(cancelled);
  clock.clearTimer(undefined);
  t.equal(clock.pending, 0);
  // A timer cancelled by one that fires before it at the same advance does not fire.
  const later = clock.setTimeout(() => fired.push('later'), 20);
  clock.setTimeout(() => clock.clearTimer(later), 10);
  await clock.advance(50);
  t.same(fired, ['kept']);
});

t.test('what a timer starts settles before the next timer fires', async (t) => {
  const clock = new SimulatedClock(START);
  const seen: string[] = [];
  clock.setTimeout(() => {
    void (async () => {
      for (let i = 0; i < 5; i += 1) await Promise.resolve();
      await new Promise((resolve) => setImmediate(resolve));
      seen.push('first done');
    })();
  }, 10);
  clock.setTimeout(() => seen.push('second'), 10);
  await clock.advance(10);
  t.same(seen, ['first done', 'second']);
});

t.test('work under way when the advance starts schedules its timer before the time moves on', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: number[] = [];
  void Promise.resolve().then(() => clock.setTimeout(() => fired.push(clock.nowMicros()), 100));
  await clock.advance(100);
  t.same(fired, [START + 100_000]);
});

t.test('advances started together run one after another', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: number[] = [];
  clock.setTimeout(() => fired.push((clock.nowMicros() - START) / 1000), 15);
  await Promise.all([clock.advance(10), clock.advance(10)]);
  t.equal(clock.nowMicros(), START + 20_000);
  t.same(fired, [15]);
});

t.test('delays below 1 ms, above the maximum or not a number fire after 1 ms, as in Node', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: number[] = [];
  const stamp = () => fired.push((clock.nowMicros() - START) / 1000);
  clock.setTimeout(stamp, 0);
  clock.setTimeout(stamp, -5);
  clock.setTimeout(stamp, Number.NaN);
  clock.setTimeout(stamp, 2 ** 31);
  await clock.advance(0.5);
  t.same(fired, []);
  await clock.advance(0.5);
  t.same(fired, [1, 1, 1, 1]);
  const zero = clock.setInterval(stamp, 0);
  await clock.advance(3);
  clock.clearTimer(zero);
  t.same(fired, [1, 1, 1, 1, 2, 3, 4]);
});

t.test('a throwing callback rejects its advance; the time stops there, and later advances go on', async (t) => {
  const clock = new SimulatedClock(START);
  const fired: number[] = [];
  clock.setTimeout(() => {
    throw new Error('boom');
  }, 10);
  clock.setTimeout(() => fired.push((clock.nowMicros() - START) / 1000), 20);
  await t.rejects(clock.advance(100), new Error('boom'));
  t.equal(clock.nowMicros(), START + 10_000);
  await clock.advance(10);
  t.same(fired, [20]);
  t.throws(() => clock.advance(-1), new RangeError('ms must be a number ≥ 0, got -1'));
  t.throws(() => clock.advance(Number.NaN), new RangeError('ms must be a number ≥ 0, got NaN'));
});
