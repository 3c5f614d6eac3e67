import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CreateNamed } from '../components/create-named.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { ShownOnce } from '../components/shown-once.tsx';
import { formatTime } from '../format.ts';
import type { ApiKey, CreatedKey, NewApiKeyBody } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/**
 * Developer → API keys: create one (shown once, with a copy button), the list with prefix, last use,
 * creation and state, and revocation. The 5-key cap and the Scale-plan rule come back from the
 * server in SPEC's words and are shown as they are.
 */
export function ApiKeysPage() {
  const keys = useResource<ApiKey[]>('/keys');
  const action = useAction();
  const [created, setCreated] = useState<CreatedKey | undefined>(undefined);
  const create = async (name: string) => {
    const key = await action.run(() => send<CreatedKey>('POST', '/keys', { name } satisfies NewApiKeyBody));
    if (key) setCreated(key);
    await keys.reload();
    return key !== undefined;
  };
  return (
    <section class="stack">
      <h1>Developer</h1>
      <p class="muted">
        API keys authenticate calls to the REST API (<code>Authorization: Bearer ic_…</code>). Use them only from
        server-side code. At most 5 keys can be active; API access needs the Scale plan.
      </p>
      <Notice>{action.error}</Notice>
      {created && (
        <ShownOnce title={`API key “${created.name}”`} value={created.key} onDone={() => setCreated(undefined)} />
      )}
      <div class="card">
        <h2>Create API key</h2>
        <CreateNamed
          class="create-key"
          label="Name"
          placeholder="production"
          submit="Generate"
          busy={action.busy}
          onCreate={create}
        />
      </div>
      <div class="card">
        <h2>API keys</h2>
        {!keys.data ? (
          <Loading error={keys.error} />
        ) : keys.data.length === 0 ? (
          <p class="empty">No API keys yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Prefix</th>
                  <th>Last used</th>
                  <th>Created</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <td data-label="Name">{key.name}</td>
                    <td data-label="Prefix">
                      <code>{key.prefix}</code>
                    </td>
                    <td data-label="Last used" class="last-used">
                      {formatTime(key.last_used_at)}
                    </td>
                    <td data-label="Created">{formatTime(key.created_at)}</td>
                    <td data-label="State">
                      <span class={`badge ${key.active ? 'ok' : 'revoked'}`}>{key.active ? 'Active' : 'Revoked'}</span>
                    </td>
                    <td>
                      {key.active && (
                        <ConfirmButton
                          class="small danger"
                          label="Revoke"
                          confirm="Revoke key"
                          onConfirm={() => action.run(() => send('POST', `/keys/${key.id}/revoke`)).then(keys.reload)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </section>
  );
}
