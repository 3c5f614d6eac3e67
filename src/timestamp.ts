/**
 * Formats epoch microseconds as SPEC's timestamp: six fractional digits and `+00:00`,
 * e.g. `2026-11-21T21:06:33.123456+00:00`.
 */
export function formatTimestamp(epochMicros: number): string {
  const millis = Math.floor(epochMicros / 1000);
  const micros = String(epochMicros % 1_000_000).padStart(6, '0');
  return `${new Date(millis).toISOString().slice(0, 19)}.${micros}+00:00`;
}
