import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import type { SessionInfo, SignInBody } from '../types.ts';
import { useAction } from '../use-resource.ts';

/** Email and password; the server's detail text on failure (wrong credentials, rate limit). */
export function SignInPage({ note, onSignedIn }: { note: string; onSignedIn: (info: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const info = await action.run(() =>
      send<SessionInfo>('POST', '/session', { email, password } satisfies SignInBody),
    );
    if (info) onSignedIn(info);
  };
  return (
    <main class="auth-page">
      <form class="card auth-card signin" onSubmit={(event) => void submit(event)}>
        <h1>Switchboard</h1>
        <p class="muted">Sign in to manage your chatbots.</p>
        {note && <Notice kind="info">{note}</Notice>}
        <Notice>{action.error}</Notice>
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
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        <button class="button primary" type="submit" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="muted small">
          No password yet? Ask your operator for an invitation link (<code>switchboard user invite</code>).
        </p>
      </form>
    </main>
  );
}
