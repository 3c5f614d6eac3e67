import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { href, navigate } from '../router.ts';
import {
  LIFECYCLE_EVENT_NAMES,
  SPEC_EVENT_NAMES,
  type Chatbot,
  type Delivery,
  type TestEventBody,
  type Webhook,
  type WebhookPatchBody,
} from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { DeliveryLog } from './delivery-log.tsx';

/**
 * One webhook: its URL and events, the secret (hidden until revealed, with copy and rotate), delete,
 * "send test event", and the delivery log (read again every two seconds while a delivery is pending).
 */
export function WebhookDetail({ chatbot, webhookId }: { chatbot: Chatbot; webhookId: string }) {
  const path = `/webhooks/${encodeURIComponent(webhookId)}`;
  const webhook = useResource<Webhook>(path);
  const deliveries = useResource<Delivery[]>(`${path}/deliveries`, {
    pollMs: 2000,
    poll: (log) => log.some((delivery) => delivery.status === 'pending'),
  });
  const action = useAction();
  const [revealed, setRevealed] = useState(false);
  const [testEvent, setTestEvent] = useState<string>(SPEC_EVENT_NAMES[0]);
  if (!webhook.data) return <Loading error={webhook.error} />;
  const hook = webhook.data;
  return (
    <div class="stack webhook-detail">
      <p class="crumbs">
        <a href={href('chatbots', chatbot.id, 'webhooks')}>Webhooks</a> /
      </p>
      <Notice>{action.error}</Notice>
      <div class="card stack">
        <h2 class="url">{hook.url}</h2>
        <p class="muted small">Events: {hook.events.join(', ')}</p>
        <div class="secret">
          <span>Signing secret</span>
          <code class="secret-value">{revealed ? hook.secret : `whsec_${'•'.repeat(16)}`}</code>
          <button type="button" class="button small ghost reveal" onClick={() => setRevealed(!revealed)}>
            {revealed ? 'Hide' : 'Reveal'}
          </button>
          <CopyButton text={hook.secret} />
          <ConfirmButton
            class="small"
            label="Rotate secret"
            confirm="Rotate now"
            onConfirm={() =>
              action.run(async () => {
                await send('POST', `${path}/rotate-secret`);
                setRevealed(true);
                await webhook.reload();
              })
            }
          />
        </div>
        <StandardWebhooks
          hook={hook}
          revealed={revealed}
          busy={action.busy}
          onChange={(on) =>
            action.run(async () => {
              await send('PATCH', path, { standard_webhooks: on } satisfies WebhookPatchBody);
              await webhook.reload();
            })
          }
        />
        <div class="actions">
          <label class="inline">
            Test event
            <select name="test-event" value={testEvent} onChange={(event) => setTestEvent(event.currentTarget.value)}>
              {SPEC_EVENT_NAMES.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
              <optgroup label="Beyond the API spec">
                {LIFECYCLE_EVENT_NAMES.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </optgroup>
            </select>
          </label>
          <button
            type="button"
            class="button send-test"
            disabled={action.busy}
            onClick={() =>
              void action
                .run(() => send('POST', `${path}/test`, { event: testEvent } satisfies TestEventBody))
                .then(deliveries.reload)
            }
          >
            Send test event
          </button>
          <ConfirmButton
            label="Delete webhook"
            confirm="Delete it"
            onConfirm={() =>
              action.run(async () => {
                await send('DELETE', path);
                navigate(href('chatbots', chatbot.id, 'webhooks'));
              })
            }
          />
        </div>
      </div>
      <div class="card">
        <div class="heading">
          <h2>Delivery log</h2>
          <button type="button" class="button small ghost" onClick={() => void deliveries.reload()}>
            Refresh
          </button>
        </div>
        {!deliveries.data ? (
          <Loading error={deliveries.error} />
        ) : (
          <DeliveryLog
            deliveries={deliveries.data}
            onRedeliver={(id) => action.run(() => send('POST', `/deliveries/${id}/redeliver`)).then(deliveries.reload)}
          />
        )}
      </div>
    </div>
  );
}

/**
 * The Standard Webhooks headers, on or off; while on, the secret as the official libraries take it
 * (the same key as the signing secret, in standard base64), hidden with the signing secret.
 */
function StandardWebhooks({
  hook,
  revealed,
  busy,
  onChange,
}: {
  hook: Webhook;
  revealed: boolean;
  busy: boolean;
  onChange: (on: boolean) => Promise<unknown>;
}) {
  return (
    <div class="stack standard-webhooks">
      <label class="check">
        <input
          type="checkbox"
          name="standard_webhooks"
          checked={hook.standard_webhooks}
          disabled={busy}
          onChange={(event) => void onChange(event.currentTarget.checked)}
        />
        Also send Standard Webhooks headers: <code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>
      </label>
      {hook.standard_webhooks_secret && (
        <div class="secret">
          <span>Standard Webhooks secret</span>
          <code class="secret-value standard-secret">
            {revealed ? hook.standard_webhooks_secret : `whsec_${'•'.repeat(16)}`}
          </code>
          <CopyButton text={hook.standard_webhooks_secret} />
        </div>
      )}
    </div>
  );
}
