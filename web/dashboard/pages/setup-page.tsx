import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { NewPasswordFields } from '../components/new-password-fields.tsx';
import { Notice } from '../components/notice.tsx';
import type { SessionInfo, SetupBody } from '../types.ts';
import { useAction } from '../use-resource.ts';

/**
 * First run: creates the owner account with the one-time setup token the gateway printed at startup
 * (filled in when the owner followed the printed link; pasted otherwise), then signs the owner in.
 */
export function SetupPage({ token, onSignedIn }: { token: string; onSignedIn: (info: SessionInfo) => void }) {
  const [setupToken, setSetupToken] = useState(token);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== repeat) {
      action.setError('The two passwords differ.');
      return;
    }
    const body: SetupBody = { token: setupToken.trim(), email, password };
    const info = await action.run(() => send<SessionInfo>('POST', '/setup', body));
    if (info) onSignedIn(info);
  };
  return (
    <main class="auth-page">
      <form class="card auth-card setup" onSubmit={(event) => void submit(event)}>
        <h1>Welcome to Switchboard</h1>
        <p class="muted">
          Create the owner account: it signs in to this dashboard and owns the chatbots. More owners can be added later
          with <code>npx switchboard user create</code>.
        </p>
        <Notice>{action.error}</Notice>
        {token ? null : (
          <label>
            Setup token
            <input
              name="token"
              autocomplete="off"
              required
              value={setupToken}
              onInput={(event) => setSetupToken(event.currentTarget.value)}
            />
            <span class="muted small">
              The gateway printed it when it started (the link after “Next: create the owner account”).
            </span>
          </label>
        )}
        <label>
          Email
          <input
            name="email"
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(event) => setEmail(event.currentTarget.value)}
          />
        </label>
        <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} />
        <button class="button primary" type="submit" disabled={action.busy}>
          Create the owner account
        </button>
      </form>
    </main>
  );
}
