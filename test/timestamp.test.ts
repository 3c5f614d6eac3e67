import t from 'tap';
import { formatTimestamp, parseTimestamp } from '../src/timestamp.ts';

t.test('six fractional digits and +00:00, microseconds kept', async (t) => {
  t.equal(formatTimestamp(1_795_000_000_123_456), '2026-11-18T11:06:40.123456+00:00');
  t.equal(formatTimestamp(1_795_000_000_000_001), '2026-11-18T11:06:40.000001+00:00');
  t.equal(formatTimestamp(0), '1970-01-01T00:00:00.000000+00:00');
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
