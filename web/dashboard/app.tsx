import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, send, setCsrfToken, whenSignedOut } from './api.ts';
import { Loading } from './components/notice.tsx';
import { Layout } from './layout.tsx';
import { InvitePage } from './pages/invite-page.tsx';
import { SetupPage } from './pages/setup-page.tsx';
import { SignInPage } from './pages/sign-in-page.tsx';
import { navigate, useRoute } from './router.ts';
import { SessionContext } from './session-context.ts';
import type { SessionInfo, SetupState } from './types.ts';

/**
 * The dashboard: the invitation page for `#/invite/…`, the first-run page while no owner account
 * exists (`#/setup/<token>` is the link the gateway printed), the sign-in form without a session, and
 * the signed-in layout with a session. A session that ends on the server (signed out elsewhere, expired)
 * brings the sign-in form back with a note.
 */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [note, setNote] = useState('');
  const [error, setError] = useState('');
  const [setupNeeded, setSetupNeeded] = useState(false);

  const signedIn = (info: SessionInfo) => {
    setCsrfToken(info.csrf_token);
    setNote('');
    setSession(info);
  };

  useEffect(() => {
    whenSignedOut(() => {
      setSession(null);
      setNote('Your session has ended. Sign in again.');
    });
    get<SessionInfo>('/session').then(signedIn, async (caught: unknown) => {
      if (!(caught instanceof ApiError) || caught.status !== 401) setError(String((caught as Error).message));
      else setSetupNeeded((await get<SetupState>('/setup').catch(() => ({ setup_needed: false }))).setup_needed);
      setSession(null);
    });
  }, []);

  if (route[0] === 'invite') {
    return (
      <InvitePage
        token={route[1] ?? ''}
        onSignedIn={(info) => {
          signedIn(info);
          navigate('#/chatbots', true);
        }}
      />
    );
  }
  if (session === undefined) return <Loading error={error} />;
  if (session === null && setupNeeded) {
    return (
      <SetupPage
        token={route[0] === 'setup' ? (route[1] ?? '') : ''}
        onSignedIn={(info) => {
          setSetupNeeded(false);
          signedIn(info);
          navigate('#/chatbots', true);
        }}
      />
    );
  }
  if (session === null) return <SignInPage note={note || error} onSignedIn={signedIn} />;

  const signOut = async (everywhere: boolean) => {
    try {
      await send('DELETE', everywhere ? '/sessions' : '/session');
    } finally {
      setSession(null);
      setNote(everywhere ? 'Signed out on every device.' : 'Signed out.');
    }
  };
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <Layout route={route} />
    </SessionContext.Provider>
  );
}
