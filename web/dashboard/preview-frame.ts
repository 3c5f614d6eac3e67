/**
 * The widget preview's page (`/dashboard/preview`, framed by the dashboard's Widget page): the real
 * widget script, as the embed tag loads it, shown open, with the draft settings in place of the saved
 * ones and talking in the chatbot's preview session. The widget takes neither from its embedder, so
 * this page answers the two documented requests it makes (DESIGN's widget protocol) with them: the
 * configuration document's public settings become the draft's, and the socket asks for the preview
 * session. Everything else is the widget's own.
 */
import { readPreviewUrl, type PreviewLook } from './preview-setup.ts';
import type { WidgetConfig } from './types.ts';

const CONFIG_PATH = '/widget/v1/config';
const SOCKET_PATH = '/widget/v1/socket';

/** The configuration document the widget fetches, with the draft's settings over the saved ones. */
function answerConfigWithDraft(look: PreviewLook): void {
  const fetchSaved = window.fetch.bind(window);
  window.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetchSaved(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    if (url.pathname !== CONFIG_PATH || !response.ok) return response;
    const saved = (await response.json()) as WidgetConfig;
    const config: WidgetConfig = { ...saved, ...look };
    return new Response(JSON.stringify(config), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
}

/** The widget's socket asks for the preview session, whichever session the widget remembered. */
function askForSession(sessionId: string): void {
  const Socket = window.WebSocket;
  window.WebSocket = class PreviewSocket extends Socket {
    constructor(url: string | URL, protocols?: string | string[]) {
      const target = new URL(String(url), location.href);
      if (target.pathname === SOCKET_PATH) target.searchParams.set('session_id', sessionId);
      super(target.href, protocols);
    }
  };
}

/**
 * Opens the widget's panel once its bubble is there (a preview shows the conversation, not just the
 * bubble), without the focus the panel takes when a visitor opens it: the frame reloads as the owner
 * edits the draft, and would take their next keys from the dashboard's form.
 */
function openWhenShown(): void {
  const observer = new MutationObserver(() => {
    const root = document.getElementById('switchboard-widget')?.shadowRoot;
    const bubble = root?.querySelector<HTMLButtonElement>('button[aria-expanded]');
    if (!bubble) return;
    observer.disconnect();
    if (bubble.getAttribute('aria-expanded') === 'true') return;
    const focus = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'focus')!;
    Object.defineProperty(HTMLElement.prototype, 'focus', { ...focus, value: () => {} });
    try {
      bubble.click(); // the widget opens its panel within the click's listener
    } finally {
      Object.defineProperty(HTMLElement.prototype, 'focus', focus);
    }
  });
  observer.observe(document.documentElement, { childList: true, subtree: true });
}

function loadWidget(chatbotId: string): void {
  const script = document.createElement('script');
  script.src = '/widget.js';
  script.dataset.chatbot = chatbotId;
  document.head.append(script);
}

const setup = readPreviewUrl(location.search, location.hash);
if (setup) {
  answerConfigWithDraft(setup.look);
  askForSession(setup.sessionId);
  openWhenShown();
  loadWidget(setup.chatbotId);
}
