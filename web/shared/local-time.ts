/**
 * A gateway timestamp (`2026-11-21T21:06:33.123456+00:00`) as the browser's locale shows it; the raw
 * text when it does not parse.
 */
export function localTime(timestamp: string): string {
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? timestamp : new Date(millis).toLocaleString();
}

/** A moment as a `<time>` element shows it: its time of day, and the instant for `datetime`. */
export interface TimeOfDay {
  /** Hours and minutes in the browser's locale and time zone, e.g. `14:05` or `2:05 PM`. */
  text: string;
  /** The instant as HTML's `datetime` takes it (at most milliseconds), e.g. `2026-11-21T13:05:00.123Z`. */
  datetime: string;
}

/** A gateway timestamp's local time of day; `null` when it does not parse. */
export function localTimeOfDay(timestamp: string): TimeOfDay | null {
  const millis = Date.parse(timestamp);
  if (Number.isNaN(millis)) return null;
  const date = new Date(millis);
  return { text: date.toLocaleTimeString(undefined, { timeStyle: 'short' }), datetime: date.toISOString() };
}
