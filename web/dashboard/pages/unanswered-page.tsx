import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ImproveAnswerForm } from '../components/improve-answer-form.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime, plural } from '../format.ts';
import { href } from '../router.ts';
import type { Chatbot, ImproveAnswerBody, ImprovedAnswer, UnansweredGroup, UnansweredReason } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** Each reason's badge, and what it means (its tooltip). */
const REASONS: Record<UnansweredReason, { label: string; title: string }> = {
  fallback: { label: 'Fallback message', title: 'The chatbot replied with its fallback message.' },
  low_relevance: { label: 'Weak match', title: 'Nothing in the sources was close to the question.' },
  sources_only: { label: 'Not in sources', title: 'Answering only from the sources, the chatbot found nothing.' },
  thumbs_down: { label: 'Thumbs down', title: 'The visitor rated the reply not helpful.' },
  escalated: { label: 'Escalated', title: 'The visitor then asked for a person.' },
};

/**
 * The questions the chatbot did not answer well, grouped when they are the same question: open ones
 * last asked first (or, with `resolved`, the resolved ones), each with how often and when it was
 * asked, why it is here, a few of its wordings and its latest conversation; "Improve answer" saves the
 * owner's answer as a text source and resolves the group, "Dismiss" resolves it without one.
 */
export function UnansweredPage({ chatbot, filter }: { chatbot: Chatbot; filter: string | undefined }) {
  const status = filter === 'resolved' ? 'resolved' : 'open';
  const list = useResource<UnansweredGroup[]>(`/chatbots/${chatbot.id}/unanswered?status=${status}`);
  const action = useAction();
  const [editing, setEditing] = useState<string>();
  const [saved, setSaved] = useState<ImprovedAnswer>();
  const base = `/chatbots/${chatbot.id}/unanswered`;
  const answer = async (group: UnansweredGroup, body: ImproveAnswerBody) => {
    const done = await action.run(() => send<ImprovedAnswer>('POST', `${base}/${group.id}/answer`, body));
    if (!done) return false;
    setSaved(done);
    setEditing(undefined);
    await list.reload();
    return true;
  };
  const dismiss = async (group: UnansweredGroup) => {
    setSaved(undefined);
    await action.run(() => send<UnansweredGroup>('POST', `${base}/${group.id}/dismiss`));
    await list.reload();
  };
  return (
    <div class="card stack unanswered">
      <div class="heading">
        <h2>Unanswered questions</h2>
        <nav class="filters" aria-label="Show">
          {(['open', 'resolved'] as const).map((which) => (
            <a
              key={which}
              class={`button small ${status === which ? 'active' : 'ghost'}`}
              aria-current={status === which ? 'page' : undefined}
              href={href('chatbots', chatbot.id, 'unanswered', ...(which === 'resolved' ? ['resolved'] : []))}
            >
              {which === 'open' ? 'Open' : 'Resolved'}
            </a>
          ))}
        </nav>
      </div>
      <p class="muted small">
        Questions that got the fallback message, a reply from weak matches, a thumbs-down or an escalation; the same
        question asked in other words is counted together.
      </p>
      {saved && (
        <Notice kind="success">
          Saved “{saved.source.title}” as a source: the chatbot answers from it once it is ingested.{' '}
          <a href={href('chatbots', chatbot.id, 'sources')}>View sources</a>
        </Notice>
      )}
      <Notice>{action.error}</Notice>
      {!list.data ? (
        <Loading error={list.error} />
      ) : list.data.length === 0 ? (
        <p class="empty">{status === 'open' ? 'No unanswered questions.' : 'No resolved questions yet.'}</p>
      ) : (
        <ul class="unanswered-list">
          {list.data.map((group) => (
            <GroupRow
              key={group.id}
              chatbot={chatbot}
              group={group}
              editing={editing === group.id}
              busy={action.busy}
              onEdit={(on) => setEditing(on ? group.id : undefined)}
              onAnswer={(body) => answer(group, body)}
              onDismiss={() => dismiss(group)}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

function GroupRow(props: {
  chatbot: Chatbot;
  group: UnansweredGroup;
  editing: boolean;
  busy: boolean;
  onEdit: (on: boolean) => void;
  onAnswer: (body: ImproveAnswerBody) => Promise<boolean>;
  onDismiss: () => Promise<void>;
}) {
  const { chatbot, group } = props;
  const others = group.examples.slice(1);
  return (
    <li class="unanswered-item" data-group-id={group.id}>
      <div class="unanswered-main">
        <span class="question">{group.question}</span>
        <span class="badge count">Asked {plural(group.count, 'time')}</span>
        {(Object.keys(REASONS) as UnansweredReason[])
          .filter((reason) => group.reasons[reason])
          .map((reason) => (
            <span key={reason} class={`badge reason ${reason}`} title={REASONS[reason].title}>
              {REASONS[reason].label}
              {group.reasons[reason]! > 1 ? ` ×${group.reasons[reason]}` : ''}
            </span>
          ))}
      </div>
      {others.length > 0 && (
        <p class="muted small examples">Also asked: {others.map((example) => `“${example}”`).join(', ')}</p>
      )}
      <p class="muted small seen">
        Last asked {formatTime(group.last_seen_at)}
        {/* A group's conversations may all have been deleted (retention, an erasure request). */}
        {group.session_id && (
          <>
            {' · '}
            <a href={href('chatbots', chatbot.id, 'conversations', group.session_id)}>Latest conversation</a>
          </>
        )}
        {group.resolved_at && <> · {resolution(group)}</>}
      </p>
      {group.status === 'open' && !props.editing && (
        <div class="actions">
          <button type="button" class="button small primary" onClick={() => props.onEdit(true)}>
            Improve answer
          </button>
          <button type="button" class="button small" disabled={props.busy} onClick={() => void props.onDismiss()}>
            Dismiss
          </button>
        </div>
      )}
      {props.editing && (
        <ImproveAnswerForm
          question={group.question}
          busy={props.busy}
          onSave={props.onAnswer}
          onCancel={() => props.onEdit(false)}
        />
      )}
    </li>
  );
}

function resolution(group: UnansweredGroup): string {
  const when = formatTime(group.resolved_at ?? null);
  return group.resolution === 'answered' ? `Answered ${when}` : `Dismissed ${when}`;
}
