import { useState } from 'preact/hooks';
import { ApiError, send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { FileDrop } from '../components/file-drop.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime, plural } from '../format.ts';
import type { Chatbot, Source } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { RetrievalProbe } from './retrieval-probe.tsx';

const WORKING = new Set(['pending', 'crawling', 'processing']);

/**
 * Training sources: add a URL, upload files, add text; the list shows each source's live status
 * (read again every two seconds while any source is still being ingested), page count and failure
 * reason.
 */
export function SourcesPage({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/sources`;
  const sources = useResource<Source[]>(path, {
    pollMs: 2000,
    poll: (list) => list.some((source) => WORKING.has(source.status)),
  });
  const action = useAction();
  const [uploads, setUploads] = useState<string[]>([]);
  const add = async (body: Record<string, string>) => {
    const added = await action.run(() => send<Source>('POST', path, body));
    await sources.reload();
    return added !== undefined;
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
                onDelete={() => action.run(() => send('DELETE', `/sources/${source.id}`)).then(sources.reload)}
              />
            ))}
          </ul>
        )}
      </div>
      <div class="grid three">
        <UrlForm busy={action.busy} onAdd={(url, title) => add({ type: 'url', url, title })} />
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

function SourceRow({ source, onDelete }: { source: Source; onDelete: () => Promise<void> }) {
  const label = source.title || source.url || (source.type === 'text' ? 'Text' : source.type);
  return (
    <li class="source-item" data-source-id={source.id} data-status={source.status}>
      <div class="source-main">
        <span class="badge type">{source.type}</span>
        <span class="source-title">{label}</span>
        {source.url && source.title && <span class="muted small url">{source.url}</span>}
      </div>
      <div class="source-meta">
        <span class={`status status-${source.status}`}>{source.status}</span>
        {WORKING.has(source.status) && source.progress && <span class="muted small">{source.progress}</span>}
        {source.status === 'failed' && <span class="error-text">{source.error}</span>}
        {source.status === 'done' && <span class="muted small pages">{plural(source.page_count, 'page')}</span>}
        <span class="muted small">{formatTime(source.created_at)}</span>
        <ConfirmButton class="small danger" label="Delete" confirm="Delete source" onConfirm={onDelete} />
      </div>
    </li>
  );
}

function UrlForm({ busy, onAdd }: { busy: boolean; onAdd: (url: string, title: string) => Promise<boolean> }) {
  const [url, setUrl] = useState('');
  return (
    <form
      class="card stack add-url"
      onSubmit={(event) => {
        event.preventDefault();
        void onAdd(url, '').then((added) => added && setUrl(''));
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
      <p class="muted small">The site is crawled from this page, within its path, respecting robots.txt.</p>
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
