/**
 * A gateway timestamp (`2026-11-21T21:06:33.123456+00:00`) as the browser's locale shows it; the raw
 * text when it does not parse.
 */
export function localTime(timestamp: string): string {
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? timestamp : new Date(millis).toLocaleString();
}
