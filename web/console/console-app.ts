import { AgentSession } from './agent-session.ts';
import { createSignInView } from './sign-in-view.ts';
import { tokenStore } from './token-store.ts';

/**
 * Runs the console in `root`: the main view while a token is kept (so a reload stays signed in), the
 * sign-in form otherwise, and back to the form, with the server's reason, when the token is refused.
 */
export function startConsole(root: HTMLElement): void {
  const tokens = tokenStore();

  const showSignIn = (error: string): void => {
    root.replaceChildren(createSignInView(error, signIn));
    root.querySelector<HTMLInputElement>('input[name="token"]')?.focus();
  };
  const signIn = (token: string): void => {
    tokens.set(token);
    // The session owns the page until it ends; nothing else needs a handle on it.
    new AgentSession(root, token, (detail) => {
      tokens.clear();
      showSignIn(detail);
    });
  };

  const saved = tokens.get();
  if (saved) signIn(saved);
  else showSignIn('');
}
