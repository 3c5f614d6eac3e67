import { localTime } from '../shared/local-time.ts';

/** A gateway timestamp in the browser's local date and time; `never` when there is none. */
export function formatTime(timestamp: string | null, never = 'Never'): string {
  return timestamp ? localTime(timestamp) : never;
}

/** A count with its noun, e.g. `1 page`, `3 pages`. */
export function plural(count: number, noun: string): string {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;
}

/** The origin the widget snippet and webhook paths are published under. */
export function publicBase(publicUrl: string | null): string {
  return (publicUrl ?? location.origin).replace(/\/$/, '');
}
