/** Where the agent's token lives between reloads of the tab. */
export interface TokenStore {
  get(): string | null;
  set(token: string): void;
  clear(): void;
}

const KEY = 'switchboard:agent-token';

/**
 * Keeps the token in `sessionStorage` (this tab only, gone when it closes), or in memory where storage is
 * unavailable.
 */
export function tokenStore(): TokenStore {
  let remembered: string | null = null;
  return {
    get() {
      try {
        return sessionStorage.getItem(KEY) ?? remembered;
      } catch {
        // Storage is blocked in some privacy modes; the in-memory copy still serves this page's lifetime.
        return remembered;
      }
    },
    set(token) {
      remembered = token;
      try {
        sessionStorage.setItem(KEY, token);
      } catch {
        // As above.
      }
    },
    clear() {
      remembered = null;
      try {
        sessionStorage.removeItem(KEY);
      } catch {
        // As above.
      }
    },
  };
}
