import { render } from 'preact';
import { App } from './app.tsx';

function boot(): void {
  const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
  root.replaceChildren();
  render(<App />, root);
}

// The page loads this script with `defer`, but it must also work when loaded any other way.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot, { once: true });
else boot();
