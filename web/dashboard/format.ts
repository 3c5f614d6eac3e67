/** A gateway timestamp (`2026-11-21T21:06:33.123456+00:00`) as the browser's local date and time. */
export function formatTime(timestamp: string | null, never = 'Never'): string {
  if (!timestamp) return never;
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString();
}

/** A count with its noun, e.g. `1 page`, `3 pages`. */
export function plural(count: number, noun: string): string {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;
}

/** The origin the widget snippet and webhook paths are published under. */
export function publicBase(publicUrl: string | null): string {
  return (publicUrl ?? location.origin).replace(/\/$/, '');
}
