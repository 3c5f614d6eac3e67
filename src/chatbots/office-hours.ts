import type { OfficeHours, Weekday } from '../contract/chatbot-settings.ts';

/** The week as office hours name it, Monday first (Intl's `weekday: 'short'` in English, lowercased). */
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** No office hours: always open, the contact form offered at once when nobody is online (a fresh copy). */
export function noOfficeHours(): OfficeHours {
  return {
    enabled: false,
    time_zone: 'UTC',
    weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
    holidays: [],
    contact_after_minutes: 0,
  };
}

/** No office hours, as a value to compare with or read from (never to change). */
export const NO_OFFICE_HOURS: OfficeHours = noOfficeHours();

/** How far ahead the next opening is looked for (a week of holidays around it still finds one). */
const SEARCH_DAYS = 60;
const DAY_MS = 24 * 3600 * 1000;

interface LocalTime {
  date: string;
  weekday: Weekday;
  minutes: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock date, weekday and minute of the day in `timeZone` at `epochMs`. */
function localTime(epochMs: number, timeZone: string): LocalTime {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(epochMs).map((part) => [part.type, part.value]));
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday: parts.weekday!.toLowerCase() as Weekday,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** "09:30" as minutes of the day ("24:00" is the day's end). */
export function minutesOf(time: string): number {
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  return hours * 60 + minutes;
}

/** The epoch milliseconds of a wall-clock date and minute in `timeZone` (the later one in a DST gap). */
function instantOf(date: string, minutes: number, timeZone: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(year, month - 1, day, Math.floor(minutes / 60), minutes % 60);
  // The zone's offset at a guess, then again at the corrected guess (it differs across a DST change).
  let guess = wall;
  for (let i = 0; i < 2; i += 1) {
    const local = localTime(guess, timeZone);
    const [y, m, d] = local.date.split('-').map(Number) as [number, number, number];
    const offset = Date.UTC(y, m - 1, d, Math.floor(local.minutes / 60), local.minutes % 60) - guess;
    guess = wall - offset;
  }
  return guess;
}

/** Whether the office is open at `epochMs` (always, without office hours). */
export function isOpen(hours: OfficeHours, epochMs: number): boolean {
  if (!hours.enabled) return true;
  const now = localTime(epochMs, hours.time_zone);
  if (hours.holidays.includes(now.date)) return false;
  return hours.weekly[now.weekday].some(([from, to]) => minutesOf(from) <= now.minutes && now.minutes < minutesOf(to));
}

/**
 * When the office next opens after `epochMs` (epoch ms); undefined without office hours, or when no
 * day of the next two months has any.
 */
export function nextOpening(hours: OfficeHours, epochMs: number): number | undefined {
  if (!hours.enabled) return undefined;
  for (let day = 0; day <= SEARCH_DAYS; day += 1) {
    // A day later is the next local date: offsets move by an hour or two, never a day.
    const { date, weekday } = localTime(epochMs + day * DAY_MS, hours.time_zone);
    if (hours.holidays.includes(date)) continue;
    const starts = hours.weekly[weekday]
      .map(([from]) => instantOf(date, minutesOf(from), hours.time_zone))
      .filter((start) => start > epochMs)
      .sort((a, b) => a - b);
    if (starts.length > 0) return starts[0];
  }
  return undefined;
}
