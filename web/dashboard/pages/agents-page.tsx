import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CreateNamed } from '../components/create-named.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { ShownOnce } from '../components/shown-once.tsx';
import { formatTime } from '../format.ts';
import type { Agent, CreatedAgent, NewAgentBody } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** Human agents: create one (its console token shown once), list, revoke; a link to the console. */
export function AgentsPage() {
  const agents = useResource<Agent[]>('/agents');
  const action = useAction();
  const [token, setToken] = useState<{ name: string; token: string } | undefined>(undefined);
  const [initial, setInitial] = useState('');
  const create = async (name: string) => {
    const body: NewAgentBody = { name, ...(initial.trim() ? { initial: initial.trim() } : {}) };
    const agent = await action.run(() => send<CreatedAgent>('POST', '/agents', body));
    if (agent) {
      setToken(agent);
      setInitial('');
    }
    await agents.reload();
    return agent !== undefined;
  };
  return (
    <section class="stack">
      <h1>Agents</h1>
      <p class="muted">
        Agents take over conversations and reply to visitors in the{' '}
        <a href="/agents" target="_blank" rel="noopener">
          agent console
        </a>
        , signing in with their token.
      </p>
      <Notice>{action.error}</Notice>
      {token && (
        <ShownOnce title={`Console token for ${token.name}`} value={token.token} onDone={() => setToken(undefined)} />
      )}
      <div class="card stack">
        <label>
          Avatar initial (optional: one or two letters visitors see beside the agent's name)
          <input
            name="initial"
            maxLength={2}
            value={initial}
            placeholder="A"
            onInput={(event) => setInitial(event.currentTarget.value)}
          />
        </label>
        <CreateNamed
          class="create-agent"
          label="Agent name"
          placeholder="Alice"
          submit="Add agent"
          busy={action.busy}
          onCreate={create}
        />
      </div>
      <div class="card">
        {!agents.data ? (
          <Loading error={agents.error} />
        ) : agents.data.length === 0 ? (
          <p class="empty">No agents yet.</p>
        ) : (
          <ul class="plain-list agent-list">
            {agents.data.map((agent) => (
              <li key={agent.id} class="row-item">
                <span class="avatar" aria-hidden="true">
                  {agent.initial}
                </span>
                <strong>{agent.name}</strong>
                <span class="muted small">added {formatTime(agent.created_at)}</span>
                <span class={`badge ${agent.active ? 'ok' : 'revoked'}`}>{agent.active ? 'Active' : 'Revoked'}</span>
                {agent.active && (
                  <ConfirmButton
                    class="small danger"
                    label="Revoke"
                    confirm="Revoke agent"
                    onConfirm={() => action.run(() => send('POST', `/agents/${agent.id}/revoke`)).then(agents.reload)}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
