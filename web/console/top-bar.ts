import type { ConnectionState } from './agent-connection.ts';
import { h } from './dom.ts';

/** The strip above the main view: who is signed in, the connection, server notices, and sign-out. */
export interface TopBar {
  element: HTMLElement;
  setAgent(name: string): void;
  setConnection(state: ConnectionState): void;
  /** An error the server sent outside any command; `''` hides it. */
  setNotice(text: string): void;
}

/**
 * "Notify me of escalations": asks the browser's permission to show a notification when a visitor
 * asks for a person; shown only while the browser can and has not been answered yet.
 */
function notificationButton(): HTMLButtonElement {
  const button = h('button', { class: 'sc-notify', text: 'Notify me of escalations', attrs: { type: 'button' } });
  const refresh = () => {
    button.hidden = !('Notification' in window) || Notification.permission !== 'default';
  };
  button.addEventListener('click', () => void Notification.requestPermission().then(refresh));
  refresh();
  return button;
}

const CONNECTION_TEXT: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  ready: 'Connected',
  disconnected: 'Reconnecting…',
};

/** Builds the bar; `onSignOut` runs when `button.sc-signout` is pressed. */
export function createTopBar(onSignOut: () => void): TopBar {
  const agent = h('span', { class: 'sc-agent-name' });
  const connection = h('span', { class: 'sc-connection', attrs: { role: 'status' } });
  const notice = h('span', { class: 'sc-notice', attrs: { role: 'alert' } });
  const signOut = h('button', { class: 'sc-signout', text: 'Sign out', attrs: { type: 'button' } });
  signOut.addEventListener('click', onSignOut);
  const element = h('header', { class: 'sc-topbar' }, [
    h('span', { class: 'sc-brand', text: 'Switchboard agents' }),
    agent,
    connection,
    notice,
    notificationButton(),
    signOut,
  ]);
  return {
    element,
    setAgent(name) {
      agent.textContent = name;
    },
    setConnection(state) {
      connection.textContent = CONNECTION_TEXT[state];
      connection.dataset.state = state;
    },
    setNotice(text) {
      notice.textContent = text;
    },
  };
}
