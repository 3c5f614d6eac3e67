import t from 'tap';
import { formatTimestamp, parseTimestamp } from '../src/timestamp.ts';

t.test('six fractional digits and +00:00, microseconds kept', async (t) => {
  t.equal(formatTimestamp(1_795_000_000_123_456), '2026-11-18T11:06:40.123456+00:00');
  t.equal(formatTimestamp(1_795_000_000_000_001), '2026-11-18T11:06:40.000001+00:00');
  t.equal(formatTimestamp(0), '1970-01-01T00:00:00.000000+00:00');
});

t.test('the computed date is the one Date gives, across leap days, month, year and century ends', async (t) => {
  const viaDate = (micros: number) =>
    `${new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}+00:00`;
  const edges = [
    '2024-02-28T23:59:59.999Z',
    '2024-02-29T23:59:59.999Z',
    '2100-02-28T23:59:59.999Z',
    '2000-02-29T00:00:00.000Z',
    '2026-12-31T23:59:59.999Z',
    '2027-01-01T00:00:00.000Z',
    '2199-12-31T23:59:59.999Z',
  ];
  const samples = edges.map((iso) => Date.parse(iso) * 1000 + 999);
  // Every 79,191,234,573 µs (about 22 hours, never a whole number of hours) from 1970 to 2200: epoch
  // microseconds are exact integers up to 2255.
  for (let micros = 0; micros < 7_258_118_400_000_000; micros += 79_191_234_573) samples.push(micros);
  t.same(
    samples.filter((micros) => formatTimestamp(micros) !== viaDate(micros)),
    [],
  );
  t.ok(samples.length > 90_000);
});

t.test('a timestamp reads back as the microseconds it was written from; anything else is undefined', async (t) => {
  t.equal(parseTimestamp('2026-11-18T11:06:40.123456+00:00'), 1_795_000_000_123_456);
  t.equal(parseTimestamp(formatTimestamp(1)), 1);
  for (const text of [
    '',
    '2026-11-18T11:06:40.123+00:00',
    '2026-11-18T11:06:40.123456Z',
    '2026-11-18T11:06:40.123456+01:00',
    '2026-02-30T11:06:40.123456+00:00',
    ' 2026-11-18T11:06:40.123456+00:00',
  ]) {
    t.equal(parseTimestamp(text), undefined, JSON.stringify(text));
  }
});

t.test('a time that is not a number is refused, as Date refused it', async (t) => {
  for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    t.throws(() => formatTimestamp(value), { name: 'RangeError', message: `Invalid time value: ${value}` });
  }
});
