import { startConsole } from './console-app.ts';
import { CONSOLE_CSS } from './console-styles.ts';
import { h } from './dom.ts';

/** The page's `#app`, or a new one when the page has none. */
function appRoot(): HTMLElement {
  const existing = document.getElementById('app');
  if (existing) return existing;
  const created = h('div', { attrs: { id: 'app' } });
  document.body.append(created);
  return created;
}

function boot(): void {
  document.head.append(h('style', { text: CONSOLE_CSS }));
  startConsole(appRoot());
}

// The page loads this script with `defer`, but it must also work when loaded any other way.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot, { once: true });
else boot();
