import t from 'tap';
import { applySettingsPatch, DEFAULT_SETTINGS } from '../../src/chatbots/chatbot-settings.ts';
import { isOpen, nextOpening, NO_OFFICE_HOURS } from '../../src/chatbots/office-hours.ts';
import type { OfficeHours } from '../../src/contract/chatbot-settings.ts';
import { ValidationError } from '../../src/errors.ts';

const at = (iso: string) => Date.parse(iso);
const weekdays = (intervals: Array<[string, string]>) => ({
  mon: intervals,
  tue: intervals,
  wed: intervals,
  thu: intervals,
  fri: intervals,
  sat: [],
  sun: [],
});
const berlin: OfficeHours = {
  enabled: true,
  time_zone: 'Europe/Berlin',
  weekly: weekdays([
    ['09:00', '12:30'],
    ['13:30', '17:00'],
  ]),
  holidays: ['2026-12-24', '2026-12-25'],
  contact_after_minutes: 5,
};

t.test('open inside an interval of the day in the office time zone, the end excluded', async (t) => {
  // Friday 27 November 2026; Berlin is UTC+1 in winter.
  t.equal(isOpen(berlin, at('2026-11-27T07:59:00Z')), false, '08:59 in Berlin');
  t.equal(isOpen(berlin, at('2026-11-27T08:00:00Z')), true, '09:00');
  t.equal(isOpen(berlin, at('2026-11-27T11:29:59Z')), true, '12:29:59');
  t.equal(isOpen(berlin, at('2026-11-27T11:30:00Z')), false, 'lunch at 12:30');
  t.equal(isOpen(berlin, at('2026-11-27T12:30:00Z')), true, '13:30');
  t.equal(isOpen(berlin, at('2026-11-27T16:00:00Z')), false, '17:00 is closed');
  t.equal(isOpen(berlin, at('2026-11-28T10:00:00Z')), false, 'Saturday');
  t.equal(isOpen(berlin, at('2026-12-24T10:00:00Z')), false, 'a holiday (a Thursday)');
  t.equal(isOpen(NO_OFFICE_HOURS, at('2026-11-28T03:00:00Z')), true, 'no office hours: always open');
});

t.test('the next opening skips lunch, weekends and holidays, across a change of daylight saving time', async (t) => {
  const next = (iso: string) => new Date(nextOpening(berlin, at(iso))!).toISOString();
  t.equal(next('2026-11-27T07:00:00Z'), '2026-11-27T08:00:00.000Z', 'this morning');
  t.equal(next('2026-11-27T11:45:00Z'), '2026-11-27T12:30:00.000Z', 'after lunch');
  t.equal(next('2026-11-27T16:30:00Z'), '2026-11-30T08:00:00.000Z', 'Friday evening: Monday 09:00');
  t.equal(next('2026-12-23T17:00:00Z'), '2026-12-28T08:00:00.000Z', 'holidays, then a weekend');
  // Berlin moves to summer time (UTC+2) on Sunday 29 March 2026: Monday 09:00 is 07:00 UTC.
  t.equal(next('2026-03-27T17:00:00Z'), '2026-03-30T07:00:00.000Z');
  // A zone ahead of UTC by more than a day's hours of office: Auckland.
  const auckland = { ...berlin, time_zone: 'Pacific/Auckland', holidays: [] };
  t.equal(new Date(nextOpening(auckland, at('2026-11-27T04:00:00Z'))!).toISOString(), '2026-11-29T20:00:00.000Z');
  t.equal(nextOpening(NO_OFFICE_HOURS, Date.now()), undefined, 'no office hours: never closed');
  t.equal(nextOpening({ ...berlin, weekly: weekdays([]) }, Date.now()), undefined, 'no hours on any day');
});

t.test('office hours are checked and replaced whole by a settings patch', async (t) => {
  const set = applySettingsPatch(structuredClone(DEFAULT_SETTINGS), {
    hours: { enabled: true, time_zone: 'Europe/Berlin', weekly: { mon: [['09:00', '17:00']] } },
  });
  t.same(set.hours, {
    enabled: true,
    time_zone: 'Europe/Berlin',
    weekly: { mon: [['09:00', '17:00']], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
    holidays: [],
    contact_after_minutes: 0,
  });
  t.same(applySettingsPatch(set, { answers: { citations: false } }).hours, set.hours, 'left as it was');
  const cases: Array<[unknown, string]> = [
    [{ time_zone: 'Mars/Olympus' }, 'hours.time_zone: must be an IANA time zone like Europe/Berlin'],
    [{ weekly: { mon: [['9:00', '17:00']] } }, 'hours.weekly.mon[0][0]: must be a time like 09:00'],
    [{ weekly: { tue: [['17:00', '09:00']] } }, 'hours.weekly.tue[0]: must end after it starts'],
    [
      {
        weekly: {
          wed: [
            ['09:00', '13:00'],
            ['12:00', '18:00'],
          ],
        },
      },
      'hours.weekly.wed: intervals must not overlap',
    ],
    [{ weekly: { someday: [] } }, 'hours.weekly: Unrecognized key: "someday"'],
    [{ holidays: ['25.12.2026'] }, 'hours.holidays[0]: must be a date like 2026-12-25'],
    [{ contact_after_minutes: -1 }, 'hours.contact_after_minutes: Too small: expected number to be >=0'],
  ];
  for (const [hours, detail] of cases) {
    t.throws(
      () => applySettingsPatch(structuredClone(DEFAULT_SETTINGS), { hours }),
      new ValidationError(detail),
      detail,
    );
  }
});
