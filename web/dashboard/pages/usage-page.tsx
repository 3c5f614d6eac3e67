import { Loading } from '../components/notice.tsx';
import type { Usage } from '../types.ts';
import { useResource } from '../use-resource.ts';

/** Messages this month against the plan's quota, and a bar chart of messages per day. */
export function UsagePage() {
  const usage = useResource<Usage>('/usage');
  if (!usage.data) return <Loading error={usage.error} />;
  const { plan, month, used, limit, days } = usage.data;
  const share = limit ? Math.min(1, used / limit) : 0;
  return (
    <section class="stack">
      <h1>Usage</h1>
      <div class="card">
        <h2>
          Messages in {month} <span class="badge">{plan} plan</span>
        </h2>
        <p class="usage-figure">
          <strong>{used.toLocaleString()}</strong>
          {limit !== null && ` of ${limit.toLocaleString()}`} messages
        </p>
        {limit !== null && (
          <div
            class="meter"
            role="meter"
            aria-valuemin={0}
            aria-valuemax={limit}
            aria-valuenow={used}
            aria-label="Monthly quota used"
          >
            <div class={`meter-fill ${share >= 0.9 ? 'high' : ''}`} style={{ width: `${(share * 100).toFixed(1)}%` }} />
          </div>
        )}
        <p class="muted small">Visitor messages from every channel count; replies by the AI or by agents do not.</p>
      </div>
      <div class="card">
        <h2>Messages per day (last {days.length} days, UTC)</h2>
        <DayChart days={days} />
      </div>
      <Ratings month={month} ratings={usage.data.ratings} />
    </section>
  );
}

/** Each chatbot's AI replies of the month that visitors rated, thumbs up and down. */
function Ratings({ month, ratings }: { month: string; ratings: Usage['ratings'] }) {
  return (
    <div class="card">
      <h2>Ratings of answers in {month}</h2>
      {ratings.length === 0 ? (
        <p class="muted small">No chatbots yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="ratings">
            <thead>
              <tr>
                <th scope="col">Chatbot</th>
                <th scope="col">Helpful</th>
                <th scope="col">Not helpful</th>
              </tr>
            </thead>
            <tbody>
              {ratings.map((row) => (
                <tr key={row.chatbot_id}>
                  <td>{row.name}</td>
                  <td>{row.up.toLocaleString()}</td>
                  <td>{row.down.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted small">Visitors rate answers with the thumbs under each reply in the widget.</p>
    </div>
  );
}

/** A bar chart, one bar per day scaled to the busiest day, with the first, middle and last dates. */
function DayChart({ days }: { days: Usage['days'] }) {
  const max = Math.max(1, ...days.map((day) => day.messages));
  const middle = days[Math.floor(days.length / 2)];
  return (
    <div>
      <p class="muted small">Busiest day: {max.toLocaleString()} messages</p>
      <div class="chart" role="img" aria-label="Messages per day">
        {days.map((day) => (
          <div key={day.date} class="day" title={`${day.date}: ${day.messages.toLocaleString()}`}>
            <div class="bar" style={{ height: `${((day.messages / max) * 100).toFixed(1)}%` }} />
          </div>
        ))}
      </div>
      <div class="chart-axis muted small">
        <span>{days[0]?.date}</span>
        <span>{middle?.date}</span>
        <span>{days[days.length - 1]?.date}</span>
      </div>
    </div>
  );
}
