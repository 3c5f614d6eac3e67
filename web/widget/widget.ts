import { h } from '../shared/dom.ts';
import { fetchConfig } from './widget-config.ts';
import { startWidget, type WidgetTarget } from './widget-controller.ts';

const HOST_ID = 'switchboard-widget';

function warn(message: string): void {
  // eslint-disable-next-line no-console -- the one line that tells a site owner why the widget is missing
  console.warn(`Switchboard widget: ${message}`);
}

/** This script's `data-chatbot` and the gateway origin it was served from (the page may be elsewhere). */
function locate(current: Element | null): WidgetTarget | null {
  const isTagged = (element: Element | null): element is HTMLScriptElement =>
    element instanceof HTMLScriptElement && !!element.dataset.chatbot && !!element.src;
  const found = isTagged(current)
    ? current
    : Array.from(document.querySelectorAll('script[data-chatbot]'))
        .filter(isTagged)
        .find((script) => /\/widget\.js([?#]|$)/.test(script.src));
  if (!found?.dataset.chatbot) return null;
  return { origin: new URL(found.src).origin, chatbotId: found.dataset.chatbot };
}

function bodyReady(): Promise<void> {
  if (document.body) return Promise.resolve();
  return new Promise((resolve) => document.addEventListener('DOMContentLoaded', () => resolve(), { once: true }));
}

async function boot(script: Element | null): Promise<void> {
  const target = locate(script);
  if (!target) return warn('no <script data-chatbot="…" src=".../widget.js"> tag found.');
  const result = await fetchConfig(target.origin, target.chatbotId);
  if (!result.ok) return warn(`${result.reason}.`);
  await bodyReady();
  // The snippet pasted twice must not give two widgets.
  if (document.getElementById(HOST_ID)) return;
  // The page's own stylesheets outrank `:host` rules, so only an inline !important keeps them off the host.
  const host = h('div', { attrs: { id: HOST_ID, style: 'all: initial !important' } });
  document.body.append(host);
  startWidget(host.attachShadow({ mode: 'open' }), target, result.config);
}

// currentScript is only set while this script first runs, so it is read now, before anything awaits.
void boot(document.currentScript);
