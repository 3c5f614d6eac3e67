/**
 * Formats epoch microseconds as SPEC's timestamp: six fractional digits and `+00:00`,
 * e.g. `2026-11-21T21:06:33.123456+00:00`. The date is computed, not asked of a Date (a third of the
 * time, and every stored message a turn reads is formatted): days to a civil date as in Howard
 * Hinnant's `civil_from_days`, with the year starting in March so that leap days come last.
 */
export function formatTimestamp(epochMicros: number): string {
  if (!Number.isFinite(epochMicros)) throw new RangeError(`Invalid time value: ${epochMicros}`);
  const seconds = Math.floor(epochMicros / 1_000_000);
  const days = Math.floor(seconds / 86_400);
  const secondOfDay = seconds - days * 86_400;
  const shifted = days + 719_468; // days since 0000-03-01
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay % 3600) / 60);
  const micros = String(epochMicros - seconds * 1_000_000).padStart(6, '0');
  return `${year}-${two(month)}-${two(day)}T${two(hour)}:${two(minute)}:${two(secondOfDay % 60)}.${micros}+00:00`;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})\+00:00$/;

/** The epoch microseconds of a timestamp {@link formatTimestamp} wrote; undefined for any other text. */
export function parseTimestamp(text: string): number | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const millis = Date.parse(`${match[1]}Z`);
  if (Number.isNaN(millis)) return undefined;
  const micros = millis * 1000 + Number(match[2]);
  return formatTimestamp(micros) === text ? micros : undefined;
}
