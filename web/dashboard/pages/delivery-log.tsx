import { formatTime } from '../format.ts';
import type { Attempt, Delivery } from '../types.ts';

/** Deliveries newest first; each with its attempts (status code, timing, error, response body). */
export function DeliveryLog({
  deliveries,
  onRedeliver,
}: {
  deliveries: Delivery[];
  onRedeliver: (id: string) => Promise<void>;
}) {
  if (deliveries.length === 0) return <p class="empty">No deliveries yet. Send a test event to see one here.</p>;
  return (
    <ul class="delivery-log">
      {deliveries.map((delivery) => (
        <li key={delivery.id} class="delivery" data-delivery-id={delivery.id} data-status={delivery.status}>
          <div class="delivery-head">
            <code class="event">{delivery.event}</code>
            <span class={`status status-${delivery.status}`}>{delivery.status}</span>
            {delivery.next_attempt_at && (
              <span class="muted small">next attempt {formatTime(delivery.next_attempt_at)}</span>
            )}
            {delivery.status !== 'pending' && (
              <button type="button" class="button small redeliver" onClick={() => void onRedeliver(delivery.id)}>
                Redeliver
              </button>
            )}
          </div>
          <table class="attempts">
            <thead>
              <tr>
                <th>#</th>
                <th>When</th>
                <th>Status</th>
                <th>Time</th>
                <th>Response</th>
              </tr>
            </thead>
            <tbody>
              {delivery.attempts.map((attempt) => (
                <AttemptRow key={attempt.attempt} attempt={attempt} />
              ))}
            </tbody>
          </table>
        </li>
      ))}
    </ul>
  );
}

function AttemptRow({ attempt }: { attempt: Attempt }) {
  const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  return (
    <tr class="attempt">
      <td>{attempt.attempt}</td>
      <td>{formatTime(attempt.at)}</td>
      <td class={`status-code ${ok ? 'ok' : 'bad'}`}>{attempt.status_code ?? attempt.error ?? '—'}</td>
      <td class="duration">{attempt.duration_ms} ms</td>
      <td>
        <pre class="response-body">{attempt.response_body || (attempt.error ?? '')}</pre>
      </td>
    </tr>
  );
}
