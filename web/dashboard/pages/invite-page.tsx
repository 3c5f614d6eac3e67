import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { NewPasswordFields } from '../components/new-password-fields.tsx';
import { Notice } from '../components/notice.tsx';
import type { InviteBody, SessionInfo } from '../types.ts';
import { useAction } from '../use-resource.ts';

/** Sets the password an invitation link asked for (typed twice), then signs the owner in. */
export function InvitePage({ token, onSignedIn }: { token: string; onSignedIn: (info: SessionInfo) => void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== repeat) {
      action.setError('The two passwords differ.');
      return;
    }
    const info = await action.run(() => send<SessionInfo>('POST', '/invite', { token, password } satisfies InviteBody));
    if (info) onSignedIn(info);
  };
  return (
    <main class="auth-page">
      <form class="card auth-card invite" onSubmit={(event) => void submit(event)}>
        <h1>Set your password</h1>
        <p class="muted">Choose a password of at least 12 characters for the Switchboard dashboard.</p>
        <Notice>{action.error}</Notice>
        <NewPasswordFields
          password={password}
          repeat={repeat}
          onPassword={setPassword}
          onRepeat={setRepeat}
          label="New password"
        />
        <button class="button primary" type="submit" disabled={action.busy}>
          Set password and sign in
        </button>
      </form>
    </main>
  );
}
