import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo } from './types.ts';

/** The signed-in owner, the gateway's public URL, and how to sign out. */
export interface SessionState {
  session: SessionInfo;
  signOut: (everywhere: boolean) => Promise<void>;
}

export const SessionContext = createContext<SessionState | undefined>(undefined);

/** The session of the signed-in page (only used below the layout, which provides it). */
export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside the signed-in layout');
  return state;
}
