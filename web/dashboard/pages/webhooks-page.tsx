import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Loading, Notice } from '../components/notice.tsx';
import { ShownOnce } from '../components/shown-once.tsx';
import { formatTime } from '../format.ts';
import { href } from '../router.ts';
import {
  LIFECYCLE_EVENT_NAMES,
  SPEC_EVENT_NAMES,
  type Chatbot,
  type NewWebhookBody,
  type Webhook,
  type WebhookWithSecret,
} from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { WebhookDetail } from './webhook-detail.tsx';

/** The chatbot's webhooks and the form for a new one; with a webhook id, that webhook's page. */
export function WebhooksPage({ chatbot, webhookId }: { chatbot: Chatbot; webhookId: string | undefined }) {
  if (webhookId) return <WebhookDetail chatbot={chatbot} webhookId={webhookId} />;
  return <WebhookList chatbot={chatbot} />;
}

function WebhookList({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/webhooks`;
  const webhooks = useResource<Webhook[]>(path);
  const action = useAction();
  const [created, setCreated] = useState<WebhookWithSecret | undefined>(undefined);
  const create = async (url: string, events: string[], standardWebhooks: boolean) => {
    const body = { url, events, standard_webhooks: standardWebhooks } satisfies NewWebhookBody;
    const hook = await action.run(() => send<WebhookWithSecret>('POST', path, body));
    if (hook) setCreated(hook);
    await webhooks.reload();
    return hook !== undefined;
  };
  return (
    <div class="stack">
      <Notice>{action.error}</Notice>
      {created && (
        <ShownOnce
          title="Signing secret of the new webhook"
          value={created.secret}
          onDone={() => setCreated(undefined)}
        />
      )}
      {created?.standard_webhooks_secret && (
        <ShownOnce
          title="The same secret for Standard Webhooks libraries"
          value={created.standard_webhooks_secret}
          onDone={() => setCreated(undefined)}
        />
      )}
      <WebhookForm busy={action.busy} onCreate={create} />
      <div class="card">
        <h2>Webhooks</h2>
        {!webhooks.data ? (
          <Loading error={webhooks.error} />
        ) : webhooks.data.length === 0 ? (
          <p class="empty">No webhooks yet.</p>
        ) : (
          <ul class="plain-list webhook-list">
            {webhooks.data.map((hook) => (
              <li key={hook.id} class="row-item" data-webhook-id={hook.id}>
                <a href={href('chatbots', chatbot.id, 'webhooks', hook.id)} class="url">
                  {hook.url}
                </a>
                <span class="muted small">{hook.events.join(', ')}</span>
                <span class="muted small">created {formatTime(hook.created_at)}</span>
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

function WebhookForm({
  busy,
  onCreate,
}: {
  busy: boolean;
  onCreate: (url: string, events: string[], standardWebhooks: boolean) => Promise<boolean>;
}) {
  const [url, setUrl] = useState('');
  const [standardWebhooks, setStandardWebhooks] = useState(false);
  // SPEC's events are checked to begin with; those beyond it only when the owner asks for them.
  const [events, setEvents] = useState<string[]>([...SPEC_EVENT_NAMES]);
  const toggle = (name: string, on: boolean) => setEvents(on ? [...events, name] : events.filter((e) => e !== name));
  return (
    <form
      class="card stack create-webhook"
      onSubmit={(event) => {
        event.preventDefault();
        void onCreate(url, events, standardWebhooks).then((created) => created && setUrl(''));
      }}
    >
      <h2>Add a webhook</h2>
      <label>
        Destination URL
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks/switchboard"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </label>
      <fieldset class="events">
        <legend>Events</legend>
        {SPEC_EVENT_NAMES.map((name) => (
          <EventCheck key={name} name={name} checked={events.includes(name)} onToggle={toggle} />
        ))}
        {LIFECYCLE_EVENT_NAMES.map((name) => (
          <EventCheck key={name} name={name} checked={events.includes(name)} onToggle={toggle} beyondSpec />
        ))}
        <p class="muted small">
          Events beyond the API spec are Switchboard's own: an agent took a conversation over, or handed it back to the
          AI. Only webhooks that select them receive them.
        </p>
      </fieldset>
      <p class="muted small">
        Deliveries are signed: <code>X-Switchboard-Signature</code> is the hex HMAC-SHA256 of the raw body, keyed with
        the webhook's secret.
      </p>
      <label class="check">
        <input
          type="checkbox"
          name="standard_webhooks"
          checked={standardWebhooks}
          onChange={(event) => setStandardWebhooks(event.currentTarget.checked)}
        />
        Also send Standard Webhooks headers
      </label>
      <p class="muted small">
        <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code>, so a receiver can
        verify deliveries and refuse replays with the official Standard Webhooks libraries. The Switchboard headers are
        sent either way.
      </p>
      <div>
        <button class="button primary" type="submit" disabled={busy}>
          Create webhook
        </button>
      </div>
    </form>
  );
}

function EventCheck({
  name,
  checked,
  onToggle,
  beyondSpec = false,
}: {
  name: string;
  checked: boolean;
  onToggle: (name: string, on: boolean) => void;
  beyondSpec?: boolean;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        name="events"
        value={name}
        checked={checked}
        onChange={(event) => onToggle(name, event.currentTarget.checked)}
      />
      <code>{name}</code>
      {beyondSpec && <span class="badge beyond-spec">beyond the API spec</span>}
    </label>
  );
}
