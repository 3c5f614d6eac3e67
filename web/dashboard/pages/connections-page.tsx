import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime } from '../format.ts';
import type { Connection, ConnectionService, NewConnectionBody } from '../types.ts';
import { useAction, useResource, type Resource } from '../use-resource.ts';

/** Services only the operator's CLI connects (the page lists their connections, it offers no form). */
const CLI_SERVICE_LABELS: Record<string, string> = { microsoft: 'Microsoft', zendesk: 'Zendesk', gitbook: 'GitBook' };

/** How to get a token, per service connected with one. */
const TOKEN_HOW_TO: Record<string, string> = {
  notion: 'Create an internal integration at notion.so/my-integrations, copy its secret, and share your pages with it.',
};

/**
 * The gateway's address that starts an OAuth sign-in: a full-page navigation (not a fetch), since
 * the gateway sends the browser on to the service and the service sends it back to `#/connections`.
 */
export function oauthStartPath(service: string): string {
  return `/dashboard/oauth/${encodeURIComponent(service)}/start`;
}

/**
 * Connections: the services connector sources read through. One card per service the server offers
 * (Connect for OAuth services, greyed out when the operator has not configured them; a token form
 * for Notion), then the owner's connections with their state, Reconnect where the service refused
 * the grant, and Disconnect.
 */
export function ConnectionsPage() {
  const offered = useResource<ConnectionService[]>('/connection-services');
  const connections = useResource<Connection[]>('/connections');
  const action = useAction();
  const labelOf = (service: string) =>
    offered.data?.find((s) => s.service === service)?.label ?? CLI_SERVICE_LABELS[service] ?? service;
  return (
    <section class="stack">
      <h1>Connections</h1>
      <p class="muted">
        Connect the services your chatbots read from. A connection belongs to your account: any of your chatbots can add
        sources through it. Its secret is stored encrypted and never shown again.
      </p>
      <Notice>{action.error}</Notice>
      {!offered.data ? (
        <Loading error={offered.error} />
      ) : (
        <ul class="cards service-cards">
          {offered.data.map((service) => (
            <ServiceCard key={service.service} service={service} onConnected={connections.reload} />
          ))}
        </ul>
      )}
      <ConnectionList
        connections={connections}
        labelOf={labelOf}
        reconnectable={(service) =>
          offered.data?.some((s) => s.service === service && s.method === 'oauth' && s.available) === true
        }
        onDisconnect={(connection) =>
          action.run(() => send('DELETE', `/connections/${connection.id}`)).then(connections.reload)
        }
      />
    </section>
  );
}

function ServiceCard({ service, onConnected }: { service: ConnectionService; onConnected: () => Promise<void> }) {
  return (
    <li class="card stack service-card" data-service={service.service}>
      <h2>{service.label}</h2>
      {service.method === 'token' ? (
        <TokenForm service={service} onConnected={onConnected} />
      ) : service.available ? (
        <>
          <p class="muted small">You sign in to {service.label} and allow read-only access, then come back here.</p>
          <div>
            <a class="button primary" href={oauthStartPath(service.service)}>
              Connect {service.label}
            </a>
          </div>
        </>
      ) : (
        <>
          <p class="muted small unavailable">
            Not available yet: the server operator must configure {service.label} sign-in on this server first.
          </p>
          <div>
            <button type="button" class="button" disabled>
              Connect {service.label}
            </button>
          </div>
        </>
      )}
    </li>
  );
}

function TokenForm({ service, onConnected }: { service: ConnectionService; onConnected: () => Promise<void> }) {
  const action = useAction();
  const [token, setToken] = useState('');
  const [label, setLabel] = useState('');
  const connect = async (event: Event) => {
    event.preventDefault();
    const made = await action.run(() =>
      send<Connection>('POST', '/connections', { service: service.service, token, label } satisfies NewConnectionBody),
    );
    if (!made) return;
    setToken('');
    setLabel('');
    await onConnected();
  };
  return (
    <form class="stack token-form" onSubmit={(event) => void connect(event)}>
      <p class="muted small how-to">{TOKEN_HOW_TO[service.service] ?? `Paste a ${service.label} token.`}</p>
      <Notice>{action.error}</Notice>
      <label>
        Integration secret
        <input
          name="token"
          type="password"
          autocomplete="off"
          required
          maxLength={4096}
          placeholder="secret_… or ntn_…"
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
        />
      </label>
      <label>
        Name (optional)
        <input
          name="label"
          maxLength={200}
          placeholder="Acme workspace"
          value={label}
          onInput={(event) => setLabel(event.currentTarget.value)}
        />
      </label>
      <div>
        <button class="button primary" type="submit" disabled={action.busy}>
          Connect {service.label}
        </button>
      </div>
    </form>
  );
}

function ConnectionList(props: {
  connections: Resource<Connection[]>;
  labelOf: (service: string) => string;
  reconnectable: (service: string) => boolean;
  onDisconnect: (connection: Connection) => Promise<void>;
}) {
  const { data, error } = props.connections;
  return (
    <div class="card">
      <h2>Your connections</h2>
      {!data ? (
        <Loading error={error} />
      ) : data.length === 0 ? (
        <p class="empty">No connections yet. YouTube videos need none; the other services need one first.</p>
      ) : (
        <ul class="plain-list connection-list">
          {data.map((connection) => {
            const label = props.labelOf(connection.service);
            const healthy = connection.status === 'active';
            return (
              <li
                key={connection.id}
                class="row-item connection-item"
                data-connection-id={connection.id}
                data-service={connection.service}
                data-status={connection.status}
              >
                <span class="connection-service">{label}</span>
                {connection.label && <span class="muted connection-label">{connection.label}</span>}
                {connection.base_url && <span class="muted small url">{connection.base_url}</span>}
                <span class={`badge ${healthy ? 'ok' : 'revoked'} connection-status`}>
                  {healthy ? 'Connected' : 'Needs reconnecting'}
                </span>
                <span class="muted small grow">Added {formatTime(connection.created_at)}</span>
                {!healthy && connection.auth_kind === 'oauth' && props.reconnectable(connection.service) && (
                  <a class="button small primary" href={oauthStartPath(connection.service)}>
                    Reconnect
                  </a>
                )}
                <ConfirmButton
                  class="small danger"
                  label="Disconnect"
                  confirm={`Disconnect ${label}`}
                  onConfirm={() => props.onDisconnect(connection)}
                />
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
