/**
 * Formats epoch microseconds as SPEC's timestamp: six fractional digits and `+00:00`,
 * e.g. `2026-11-21T21:06:33.123456+00:00`.
 */
export function formatTimestamp(epochMicros: number): string {
  const millis = Math.floor(epochMicros / 1000);
  const micros = String(epochMicros % 1_000_000).padStart(6, '0');
  return `${new Date(millis).toISOString().slice(0, 19)}.${micros}+00:00`;
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
