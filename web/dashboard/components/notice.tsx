import type { ComponentChildren } from 'preact';

/** An error (the API's detail text) or a confirmation, announced to screen readers. */
export function Notice({
  kind = 'error',
  children,
}: {
  kind?: 'error' | 'success' | 'info';
  children: ComponentChildren;
}) {
  if (children === '' || children === undefined || children === null || children === false) return null;
  return (
    <div class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** What a page shows while its data loads, or when it failed to. */
export function Loading({ error }: { error?: string }) {
  return error ? <Notice>{error}</Notice> : <p class="muted">Loading…</p>;
}
