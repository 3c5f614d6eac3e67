import { useEffect, useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import type { Chatbot, OfficeHours, Settings, SettingsPatch, Weekday } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

const DAYS: Array<[Weekday, string]> = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
];

/** The form's text fields: a day's intervals as "09:00-12:30, 13:30-17:00", holidays one a line. */
interface HoursDraft {
  enabled: boolean;
  time_zone: string;
  days: Record<Weekday, string>;
  holidays: string;
  contact_after_minutes: string;
}

function draftOf(hours: OfficeHours): HoursDraft {
  const days = Object.fromEntries(
    DAYS.map(([day]) => [day, hours.weekly[day].map(([from, to]) => `${from}-${to}`).join(', ')]),
  ) as Record<Weekday, string>;
  return {
    enabled: hours.enabled,
    time_zone: hours.time_zone,
    days,
    holidays: hours.holidays.join('\n'),
    contact_after_minutes: String(hours.contact_after_minutes),
  };
}

/** The draft as the settings API takes it; the gateway checks every value (and says which is wrong). */
function hoursOf(draft: HoursDraft): OfficeHours {
  const weekly = Object.fromEntries(
    DAYS.map(([day]) => [
      day,
      draft.days[day]
        .split(',')
        .map((interval) => interval.trim())
        .filter(Boolean)
        .map((interval) => interval.split('-').map((time) => time.trim()) as [string, string]),
    ]),
  ) as Record<Weekday, Array<[string, string]>>;
  return {
    enabled: draft.enabled,
    time_zone: draft.time_zone.trim(),
    weekly,
    holidays: draft.holidays
      .split(/[\n,]/)
      .map((day) => day.trim())
      .filter(Boolean),
    contact_after_minutes: Number(draft.contact_after_minutes || 0),
  };
}

/**
 * When people answer (`bot configure --office-hours`): a visitor who asks for a person outside them is
 * offered the contact form and told when the office opens; inside them with nobody online, after the
 * wait chosen here.
 */
export function OfficeHoursCard({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  const action = useAction();
  const [saved, setSaved] = useState('');
  const [draft, setDraft] = useState<HoursDraft | undefined>(undefined);
  useEffect(() => {
    if (settings.data) setDraft(draftOf(settings.data.hours));
  }, [settings.data]);
  if (!draft) return null;
  // On the latest draft: two changes before the next render both count.
  const set = (fields: Partial<HoursDraft>) => setDraft((current) => current && { ...current, ...fields });
  const save = () => {
    setSaved('');
    void action.run(async () => {
      await send('PATCH', path, { hours: hoursOf(draft) } satisfies SettingsPatch);
      await settings.reload();
      setSaved('Office hours saved.');
    });
  };
  return (
    <form
      class="card stack office-hours"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h2>Office hours</h2>
      <Notice>{action.error || settings.error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <label class="check">
        <input
          type="checkbox"
          name="hours_enabled"
          checked={draft.enabled}
          onChange={(event) => set({ enabled: event.currentTarget.checked })}
        />
        Answer visitors who ask for a person only in office hours
      </label>
      <label>
        Time zone
        <input
          name="time_zone"
          value={draft.time_zone}
          placeholder="Europe/Berlin"
          onInput={(event) => set({ time_zone: event.currentTarget.value })}
        />
      </label>
      <div class="hours-days">
        {DAYS.map(([day, name]) => (
          <label key={day}>
            {name}
            <input
              name={`hours_${day}`}
              value={draft.days[day]}
              placeholder="closed"
              onInput={(event) => set({ days: { ...draft.days, [day]: event.currentTarget.value } })}
            />
          </label>
        ))}
      </div>
      <label>
        Holidays (one date a line, like 2026-12-25)
        <textarea
          name="holidays"
          rows={3}
          value={draft.holidays}
          onInput={(event) => set({ holidays: event.currentTarget.value })}
        />
      </label>
      <label>
        In office hours with nobody online, offer the contact form after (minutes)
        <input
          name="contact_after_minutes"
          type="number"
          min={0}
          max={1440}
          value={draft.contact_after_minutes}
          onInput={(event) => set({ contact_after_minutes: event.currentTarget.value })}
        />
      </label>
      <p class="muted small">
        A day's hours as 09:00-12:30, 13:30-17:00; leave a day empty when you are closed. Outside office hours a visitor
        who asks for a person gets the contact form at once and is told when you open.
      </p>
      <div>
        <button class="button primary" type="submit" disabled={action.busy}>
          Save office hours
        </button>
      </div>
    </form>
  );
}
