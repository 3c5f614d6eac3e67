import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import type { CannedReply, CannedReplyPatchBody, NewCannedReplyBody } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** As many as the server keeps per owner (its 400 says so too). */
const MAX_REPLIES = 200;
const MAX_TEXT = 4000;

/** A shortcut and a text, for a new reply or an edit; the server's rules answer with its own words. */
function CannedReplyForm(props: {
  class: string;
  initial?: NewCannedReplyBody;
  submit: string;
  busy: boolean;
  onSave: (body: NewCannedReplyBody) => Promise<boolean>;
  onCancel?: () => void;
}) {
  const [shortcut, setShortcut] = useState(props.initial?.shortcut ?? '');
  const [text, setText] = useState(props.initial?.text ?? '');
  const length = [...text].length;
  return (
    <form
      class={`canned-form ${props.class}`}
      onSubmit={(event) => {
        event.preventDefault();
        void props.onSave({ shortcut, text }).then((saved) => {
          if (saved && !props.initial) {
            setShortcut('');
            setText('');
          }
        });
      }}
    >
      <label class="canned-shortcut-field">
        Shortcut
        <span class="shortcut-input">
          <span aria-hidden="true">/</span>
          <input
            name="shortcut"
            required
            placeholder="refund"
            autocomplete="off"
            spellcheck={false}
            value={shortcut}
            onInput={(event) => setShortcut(event.currentTarget.value)}
          />
        </span>
        <span class="muted small">a-z, 0-9, - and _; up to 32</span>
      </label>
      <label class="canned-text-field">
        Text
        <textarea name="text" rows={3} required value={text} onInput={(event) => setText(event.currentTarget.value)} />
        <span class={`small ${length > MAX_TEXT ? 'over' : 'muted'}`}>
          {length} / {MAX_TEXT}
        </span>
      </label>
      <div class="actions">
        <button class="button primary" type="submit" disabled={props.busy}>
          {props.submit}
        </button>
        {props.onCancel && (
          <button class="button ghost" type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * Canned replies: ready answers agents put in the console's reply box by typing `/` and a shortcut.
 * Add, edit (shortcut and text), delete; at most 200.
 */
export function CannedRepliesPage() {
  const replies = useResource<CannedReply[]>('/canned-replies');
  const action = useAction();
  const [editing, setEditing] = useState<string | null>(null);
  const create = async (body: NewCannedReplyBody) => {
    const created = await action.run(() => send<CannedReply>('POST', '/canned-replies', body));
    await replies.reload();
    return created !== undefined;
  };
  const update = async (id: string, body: CannedReplyPatchBody) => {
    const updated = await action.run(() => send<CannedReply>('PATCH', `/canned-replies/${id}`, body));
    await replies.reload();
    if (updated) setEditing(null);
    return updated !== undefined;
  };
  const remove = async (id: string) => {
    await action.run(() => send('DELETE', `/canned-replies/${id}`));
    await replies.reload();
  };
  return (
    <section class="stack">
      <h1>Canned replies</h1>
      <p class="muted">
        Ready answers for your agents: in the{' '}
        <a href="/agents" target="_blank" rel="noopener">
          agent console
        </a>
        , typing <code>/</code> at the start of a reply lists them; the chosen one goes into the reply box, where the
        agent can change it before sending.
      </p>
      <Notice>{action.error}</Notice>
      <div class="card">
        <CannedReplyForm class="create-canned" submit="Add canned reply" busy={action.busy} onSave={create} />
      </div>
      <div class="card">
        {!replies.data ? (
          <Loading error={replies.error} />
        ) : replies.data.length === 0 ? (
          <p class="empty">No canned replies yet.</p>
        ) : (
          <>
            <p class="muted small canned-count">
              {replies.data.length} of {MAX_REPLIES}
            </p>
            <ul class="plain-list canned-list">
              {replies.data.map((reply) => (
                <li key={reply.id} class="row-item canned-item" data-shortcut={reply.shortcut}>
                  {editing === reply.id ? (
                    <CannedReplyForm
                      class="edit-canned"
                      initial={{ shortcut: reply.shortcut, text: reply.text }}
                      submit="Save"
                      busy={action.busy}
                      onSave={(body) => update(reply.id, body)}
                      onCancel={() => setEditing(null)}
                    />
                  ) : (
                    <>
                      <code class="canned-shortcut">/{reply.shortcut}</code>
                      <p class="canned-text">{reply.text}</p>
                      <span class="actions">
                        <button class="button small" type="button" onClick={() => setEditing(reply.id)}>
                          Edit
                        </button>
                        <ConfirmButton
                          class="small danger"
                          label="Delete"
                          confirm="Delete canned reply"
                          onConfirm={() => remove(reply.id)}
                        />
                      </span>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </section>
  );
}
