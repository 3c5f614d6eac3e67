import { useState } from 'preact/hooks';
import { ApiError, send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { FileDrop } from '../components/file-drop.tsx';
import { KnowledgeStatusNotice } from '../components/knowledge-status.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { RefreshSelect, SourceSync } from '../components/source-sync.tsx';
import { formatTime } from '../format.ts';
import { href } from '../router.ts';
import type {
  Chatbot,
  Connection,
  ConnectorType,
  NewSourceBody,
  Refresh,
  Source,
  SourcePatchBody,
  SyncStarted,
} from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { RetrievalProbe } from './retrieval-probe.tsx';
import { sourceSize } from './source-size.ts';

const WORKING = new Set(['pending', 'crawling', 'processing']);

/** Whether a source is being ingested, or a done one synced (its progress line says so). */
function running(source: Source): boolean {
  return WORKING.has(source.status) || (source.status === 'done' && source.progress !== '');
}

/**
 * Whether a sync asked for has yet to end, `before` being the end of the sync before it: it is queued
 * (no progress until a gateway claims it), running, or ended but its next sync not scheduled yet.
 */
function syncAwaited(source: Source, before: string | undefined): boolean {
  if (before === undefined) return false;
  return source.last_sync?.at === before || (source.refresh !== 'off' && source.next_sync_at === '');
}

/** The source types read through a connector, as the owner picks them, and the service each needs. */
const CONNECTORS: Record<ConnectorType, { label: string; service: string | null; placeholder: string; help: string }> =
  {
    youtube: {
      label: 'YouTube',
      service: null,
      placeholder: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      help: 'One video: its captions are read as the transcript. No connection needed.',
    },
    google_drive: {
      label: 'Google Drive',
      service: 'google_drive',
      placeholder: 'https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOpQrStUvWxYz012345',
      help: 'A file or folder link (or its id) that your connected Google account can open.',
    },
    notion: {
      label: 'Notion',
      service: 'notion',
      placeholder: 'https://www.notion.so/acme/Handbook-0123456789abcdef0123456789abcdef',
      help: 'A page or database link, shared with your Notion integration (page menu → Connections).',
    },
    dropbox: {
      label: 'Dropbox',
      service: 'dropbox',
      placeholder: 'https://www.dropbox.com/scl/fo/4k2x9b7q3m1/AAB8f3k2?rlkey=a8f3k2lq9&dl=0',
      help: 'A shared link to a file or folder, or a path in your connected Dropbox such as /Team/Handbook.',
    },
  };

/**
 * Training sources: add a URL, upload files, add text, add from YouTube, Google Drive, Notion or
 * Dropbox; the list shows each source's live status and progress (read again every two seconds while
 * any source is still being ingested or synced, or a sync asked for has not ended yet), page count,
 * failure reason, and for url and connector sources their syncs, schedule and "Sync now".
 */
export function SourcesPage({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/sources`;
  // Sources whose "Sync now" has not ended yet, by the end of their sync before it (`last_sync.at`):
  // a queued sync shows no progress until a gateway claims it.
  const [awaiting, setAwaiting] = useState<Record<string, string>>({});
  const sources = useResource<Source[]>(path, {
    pollMs: 2000,
    poll: (list) => list.some((source) => running(source) || syncAwaited(source, awaiting[source.id])),
  });
  const action = useAction();
  const [uploads, setUploads] = useState<string[]>([]);
  const add = async (body: NewSourceBody) => {
    const added = await action.run(() => send<Source>('POST', path, body));
    await sources.reload();
    return added !== undefined;
  };
  const setRefresh = async (source: Source, refresh: Refresh) => {
    await action.run(() => send<Source>('PATCH', `/sources/${source.id}`, { refresh } satisfies SourcePatchBody));
    await sources.reload();
  };
  const syncNow = async (source: Source) => {
    const started = await action.run(() => send<SyncStarted>('POST', `/sources/${source.id}/sync`));
    if (started) {
      // Asked for during a run, the sync follows that run. The page follows the run in progress, which
      // may have ended before this answer was read: its end is the first after the one the list showed.
      const before = started.sync === 'queued' ? started.last_sync?.at : source.last_sync?.at;
      setAwaiting((was) => ({ ...was, [source.id]: before ?? '' }));
    }
    await sources.reload();
  };
  const upload = async (files: File[]) => {
    const failures: string[] = [];
    await action.run(async () => {
      for (const file of files) {
        try {
          await send('POST', `/chatbots/${chatbot.id}/files`, file, { 'X-Filename': encodeURIComponent(file.name) });
        } catch (caught) {
          failures.push(`${file.name}: ${caught instanceof ApiError ? caught.detail : String(caught)}`);
        }
      }
    });
    setUploads(failures);
    await sources.reload();
  };
  return (
    <div class="stack">
      <KnowledgeStatusNotice />
      <Notice>{action.error}</Notice>
      {uploads.map((failure) => (
        <Notice key={failure}>{failure}</Notice>
      ))}
      <div class="card">
        <h2>Sources</h2>
        {!sources.data ? (
          <Loading error={sources.error} />
        ) : sources.data.length === 0 ? (
          <p class="empty">No sources yet: the chatbot answers only from what you add here.</p>
        ) : (
          <ul class="source-list">
            {sources.data.map((source) => (
              <SourceRow
                key={source.id}
                source={source}
                busy={action.busy}
                onDelete={() => action.run(() => send('DELETE', `/sources/${source.id}`)).then(sources.reload)}
                onRefresh={(refresh) => setRefresh(source, refresh)}
                onSync={() => syncNow(source)}
              />
            ))}
          </ul>
        )}
      </div>
      <ConnectorForm busy={action.busy} onAdd={add} />
      <div class="grid three">
        <UrlForm busy={action.busy} onAdd={(url, refresh) => add({ type: 'url', url, title: '', refresh })} />
        <div class="card">
          <h2>Upload files</h2>
          <FileDrop busy={action.busy} onFiles={(files) => void upload(files)} />
        </div>
        <TextForm busy={action.busy} onAdd={(text, title) => add({ type: 'text', text, title })} />
      </div>
      <RetrievalProbe chatbot={chatbot} />
    </div>
  );
}

function SourceRow(props: {
  source: Source;
  busy: boolean;
  onDelete: () => Promise<void>;
  onRefresh: (refresh: Refresh) => Promise<void>;
  onSync: () => Promise<void>;
}) {
  const { source } = props;
  const link = source.url || source.reference || '';
  const label = source.title || link || (source.type === 'text' ? 'Text' : source.type);
  const reconnect = source.status === 'failed' && source.error.startsWith('Reconnect ');
  return (
    <li class="source-item" data-source-id={source.id} data-status={source.status}>
      <div class="source-main">
        <span class="badge type">{CONNECTORS[source.type as ConnectorType]?.label ?? source.type}</span>
        <span class="source-title">{label}</span>
        {link && source.title && <span class="muted small url">{link}</span>}
      </div>
      <div class="source-meta">
        <span class={`status status-${source.status}`}>{source.status}</span>
        {running(source) && source.progress && <span class="muted small progress">{source.progress}</span>}
        {source.status === 'failed' && <span class="error-text">{source.error}</span>}
        {reconnect && (
          <a class="small" href={href('connections')}>
            Open Connections
          </a>
        )}
        {source.status === 'done' && <span class="muted small pages">{sourceSize(source)}</span>}
        <span class="muted small">{formatTime(source.created_at)}</span>
        <ConfirmButton class="small danger" label="Delete" confirm="Delete source" onConfirm={props.onDelete} />
      </div>
      {source.refresh && source.last_sync && (
        <SourceSync
          source={source}
          refresh={source.refresh}
          last={source.last_sync}
          busy={props.busy}
          onRefresh={props.onRefresh}
          onSync={props.onSync}
        />
      )}
    </li>
  );
}

function UrlForm({ busy, onAdd }: { busy: boolean; onAdd: (url: string, refresh: Refresh) => Promise<boolean> }) {
  const [url, setUrl] = useState('');
  const [refresh, setRefresh] = useState<Refresh>('weekly');
  return (
    <form
      class="card stack add-url"
      onSubmit={(event) => {
        event.preventDefault();
        void onAdd(url, refresh).then((added) => added && setUrl(''));
      }}
    >
      <h2>Add a website</h2>
      <label>
        URL
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/docs"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </label>
      <RefreshSelect value={refresh} onChange={setRefresh} />
      <p class="muted small">
        The site is crawled from this page, within its path, respecting robots.txt, and synced again on this schedule.
      </p>
      <div>
        <button class="button primary" type="submit" disabled={busy}>
          Add URL
        </button>
      </div>
    </form>
  );
}

function TextForm({ busy, onAdd }: { busy: boolean; onAdd: (text: string, title: string) => Promise<boolean> }) {
  const [text, setText] = useState('');
  const [title, setTitle] = useState('');
  return (
    <form
      class="card stack add-text"
      onSubmit={(event) => {
        event.preventDefault();
        void onAdd(text, title).then((added) => {
          if (!added) return;
          setText('');
          setTitle('');
        });
      }}
    >
      <h2>Add text</h2>
      <label>
        Title
        <input name="title" maxLength={300} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
      </label>
      <label>
        Text
        <textarea name="text" rows={3} required value={text} onInput={(event) => setText(event.currentTarget.value)} />
      </label>
      <div>
        <button class="button primary" type="submit" disabled={busy}>
          Add text
        </button>
      </div>
    </form>
  );
}

/**
 * Adds a source read through a connector: the type, the link as the owner copies it, and — for a
 * service with more than one of the owner's connections — which connection reads it. Without a
 * connection of the service, it sends the owner to the Connections page first.
 */
function ConnectorForm({ busy, onAdd }: { busy: boolean; onAdd: (body: NewSourceBody) => Promise<boolean> }) {
  const connections = useResource<Connection[]>('/connections');
  const [type, setType] = useState<ConnectorType>('youtube');
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState('');
  const [refresh, setRefresh] = useState<Refresh>('weekly');
  const connector = CONNECTORS[type];
  const own = (connections.data ?? []).filter((c) => c.service === connector.service);
  // The server's own choice when none is named: the newest working connection.
  const fallback = own.find((c) => c.status === 'active') ?? own[0];
  const connectionId = own.some((c) => c.id === chosen) ? chosen : (fallback?.id ?? '');
  const missing = connector.service !== null && connections.data !== undefined && own.length === 0;
  const stale = own.find((c) => c.id === connectionId)?.status === 'needs_reauth';
  const submit = (event: Event) => {
    event.preventDefault();
    const body: NewSourceBody = { type, url, refresh };
    if (own.length > 1) body.connection_id = connectionId;
    void onAdd(body).then((added) => added && setUrl(''));
  };
  return (
    <form class="card stack add-connector" onSubmit={submit}>
      <h2>Add from a service</h2>
      <div class="row">
        <label class="connector-type">
          Type
          <select name="type" value={type} onChange={(event) => setType(event.currentTarget.value as ConnectorType)}>
            {Object.entries(CONNECTORS).map(([id, { label }]) => (
              <option key={id} value={id}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label class="connector-link">
          Link
          <input
            name="reference"
            required
            autocomplete="off"
            placeholder={connector.placeholder}
            value={url}
            onInput={(event) => setUrl(event.currentTarget.value)}
          />
        </label>
        {own.length > 1 && (
          <label class="connector-connection">
            Connection
            <select name="connection" value={connectionId} onChange={(event) => setChosen(event.currentTarget.value)}>
              {own.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.label || connector.label} · added {formatTime(c.created_at)}
                  {c.status === 'needs_reauth' ? ' · needs reconnecting' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <RefreshSelect class="connector-refresh" value={refresh} onChange={setRefresh} />
        <div>
          <button class="button primary" type="submit" disabled={busy || missing}>
            Add source
          </button>
        </div>
      </div>
      <p class="muted small connector-help">{connector.help}</p>
      {missing && (
        <p class="connect-first">
          <a href={href('connections')}>Connect {connector.label} first</a>: your account has no {connector.label}{' '}
          connection yet.
        </p>
      )}
      {stale && (
        <p class="error-text">
          This {connector.label} connection needs reconnecting: <a href={href('connections')}>open Connections</a>.
        </p>
      )}
    </form>
  );
}
