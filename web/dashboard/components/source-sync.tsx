import { useState } from 'preact/hooks';
import { formatTime } from '../format.ts';
import type { Refresh, Source, SyncRecord } from '../types.ts';

/** The re-sync schedules an owner picks from, in the order the select lists them. */
const SCHEDULES: Array<[Refresh, string]> = [
  ['off', 'Off'],
  ['daily', 'Daily'],
  ['weekly', 'Weekly'],
];

/** How often a url or connector source is synced again: in the add forms and on each such source. */
export function RefreshSelect(props: {
  value: Refresh;
  onChange: (refresh: Refresh) => void;
  disabled?: boolean;
  class?: string;
}) {
  return (
    <label class={props.class}>
      Refresh
      <select
        name="refresh"
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.currentTarget.value as Refresh)}
      >
        {SCHEDULES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** What a sync did to the source's documents or pages, e.g. `2 added, 1 changed, 0 removed, 40 unchanged`. */
export function syncCounts(sync: SyncRecord): string {
  const counts: Array<[number, string]> = [
    [sync.added, 'added'],
    [sync.changed, 'changed'],
    [sync.removed, 'removed'],
    [sync.unchanged, 'unchanged'],
  ];
  return counts.map(([count, what]) => `${count.toLocaleString()} ${what}`).join(', ');
}

/**
 * A url or connector source's syncs: when the last ended and what it did (or why it failed), when
 * the next is due, its schedule (changed at once) and "Sync now" (during a sync too: the gateway
 * then syncs again once that one ends). Shown only for the sources the gateway syncs, the ones whose
 * view carries `last_sync`.
 */
export function SourceSync(props: {
  source: Source;
  refresh: Refresh;
  last: SyncRecord;
  busy: boolean;
  onRefresh: (refresh: Refresh) => Promise<void>;
  onSync: () => Promise<void>;
}) {
  const { source, last } = props;
  // The owner's choice while it is being saved, so the select does not jump back meanwhile.
  const [saving, setSaving] = useState<Refresh | undefined>(undefined);
  const change = (refresh: Refresh) => {
    setSaving(refresh);
    void props.onRefresh(refresh).finally(() => setSaving(undefined));
  };
  return (
    <div class="source-sync">
      <span class="muted small last-sync">Last sync: {formatTime(last.at, 'not yet')}</span>
      {last.at && !last.error && <span class="muted small sync-counts">{syncCounts(last)}</span>}
      {/* A failed source shows its reason already: the same text. */}
      {last.error && source.status !== 'failed' && (
        <span class="error-text sync-error">Last sync failed: {last.error}</span>
      )}
      <span class="muted small next-sync">Next sync: {formatTime(source.next_sync_at ?? '', 'not scheduled')}</span>
      <RefreshSelect class="inline small" value={saving ?? props.refresh} disabled={props.busy} onChange={change} />
      <button type="button" class="button small" disabled={props.busy} onClick={() => void props.onSync()}>
        Sync now
      </button>
    </div>
  );
}
