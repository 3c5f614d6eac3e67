import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { ImproveAnswerForm } from '../components/improve-answer-form.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime } from '../format.ts';
import { href, navigate } from '../router.ts';
import type {
  Chatbot,
  ConversationErased,
  ConversationSummary,
  ImproveAnswerBody,
  ImprovedAnswer,
  ImproveReplyBody,
  LeadName,
  Message,
  MessageDelivery,
  Transcript,
} from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { visitorLabel } from '../../shared/visitor-label.ts';

const SOURCES: Record<string, string> = { embed: 'Widget', telegram: 'Telegram', whatsapp: 'WhatsApp', api: 'API' };

/**
 * Conversations on every channel, newest activity first, each named after its visitor (the lead they
 * left, else the channel and a short id) and linked to that lead; with a session id, that transcript.
 */
export function ConversationsPage({ chatbot, sessionId }: { chatbot: Chatbot; sessionId: string | undefined }) {
  if (sessionId) return <TranscriptView chatbot={chatbot} sessionId={sessionId} />;
  return <ConversationList chatbot={chatbot} />;
}

function ConversationList({ chatbot }: { chatbot: Chatbot }) {
  const list = useResource<ConversationSummary[]>(`/chatbots/${chatbot.id}/conversations`);
  return (
    <div class="card">
      <div class="heading">
        <h2>Conversations</h2>
        <a class="button ghost" href="/agents" target="_blank" rel="noopener">
          Open the agent console
        </a>
      </div>
      {!list.data ? (
        <Loading error={list.error} />
      ) : list.data.length === 0 ? (
        <p class="empty">No conversations yet.</p>
      ) : (
        <ul class="conversation-list">
          {list.data.map((c) => (
            <li key={c.session_id} class="conversation-item" data-session-id={c.session_id}>
              <a href={href('chatbots', chatbot.id, 'conversations', c.session_id)} class="session">
                {visitorLabel(c)}
              </a>
              <span class="badge source">{SOURCES[c.source] ?? c.source}</span>
              {c.preview && <span class="badge preview">Preview</span>}
              {c.lead && <LeadLink chatbot={chatbot} lead={c.lead} />}
              {c.escalated_at && <span class="badge escalated">Escalated</span>}
              {c.taken_over_by && <span class="badge held">Held by {c.taken_over_by}</span>}
              <span class="last-message">
                {c.last_message ? `${c.last_message.role}: ${c.last_message.content}` : '—'}
              </span>
              <span class="muted small">{formatTime(c.last_activity_at)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function TranscriptView({ chatbot, sessionId }: { chatbot: Chatbot; sessionId: string }) {
  const path = `/chatbots/${chatbot.id}/conversations/${encodeURIComponent(sessionId)}`;
  const transcript = useResource<Transcript>(path);
  const action = useAction();
  // The AI reply (its created_at) whose answer the owner is improving, and the last answer saved.
  const [improving, setImproving] = useState<string>();
  const [saved, setSaved] = useState<ImprovedAnswer>();
  if (!transcript.data) return <Loading error={transcript.error} />;
  const c = transcript.data;
  const act = (what: 'escalate' | 'release') =>
    action.run(() => send('POST', `${path}/${what}`)).then(transcript.reload);
  const improve = async (reply: Message, body: ImproveAnswerBody) => {
    const request: ImproveReplyBody = { ...body, created_at: reply.created_at };
    const done = await action.run(() => send<ImprovedAnswer>('POST', `${path}/answer`, request));
    if (done) {
      setSaved(done);
      setImproving(undefined);
    }
    return done !== undefined;
  };
  return (
    <div class="card stack transcript-view">
      <p class="crumbs">
        <a href={href('chatbots', chatbot.id, 'conversations')}>Conversations</a> /
      </p>
      <h2 class="session">{visitorLabel(c)}</h2>
      <p class="muted small visitor">
        {c.lead && (
          <>
            {[c.lead.name, c.lead.email].filter(Boolean).join(' · ')} · <LeadLink chatbot={chatbot} lead={c.lead} />
            {' · '}
          </>
        )}
        Session <code class="session-id">{c.session_id}</code>
      </p>
      <p class="state">
        <span class="badge source">{SOURCES[c.source] ?? c.source}</span>{' '}
        {c.preview && (
          <>
            <span class="badge preview">Preview</span>{' '}
          </>
        )}
        {c.escalated_at ? `Escalated ${formatTime(c.escalated_at)}.` : 'Not escalated.'}{' '}
        {c.taken_over_by ? `Held by ${c.taken_over_by}: the AI is silent.` : 'The AI answers.'}
      </p>
      <Notice>{action.error}</Notice>
      {saved && (
        <Notice kind="success">
          Saved “{saved.source.title}” as a source: the chatbot answers from it once it is ingested.{' '}
          <a href={href('chatbots', chatbot.id, 'sources')}>View sources</a>
        </Notice>
      )}
      <div class="actions">
        <a class="button" href="/agents" target="_blank" rel="noopener">
          Reply in the agent console
        </a>
        {!c.escalated_at && (
          <button type="button" class="button" onClick={() => void act('escalate')}>
            Escalate
          </button>
        )}
        {c.taken_over_by && (
          <button type="button" class="button" onClick={() => void act('release')}>
            Hand back to the AI
          </button>
        )}
        <ConfirmButton
          label="Delete conversation"
          confirm={c.lead ? 'Delete it and its lead for good' : 'Delete it for good'}
          disabled={action.busy}
          onConfirm={async () => {
            const erased = await action.run(() => send<ConversationErased>('DELETE', path));
            if (erased) navigate(href('chatbots', chatbot.id, 'conversations'));
          }}
        />
      </div>
      <p class="muted small">
        Deleting erases the transcript with its ratings and notes, and the lead the visitor left, for a visitor who asks
        to be forgotten. Webhook deliveries already made are in your own systems and are not recalled.
      </p>
      <ol class="transcript">
        {c.messages.map((message, i) => (
          <li key={i} class={`msg ${message.role}`}>
            <span class="role">{message.role === 'user' ? 'Visitor' : message.role === 'agent' ? 'Agent' : 'AI'}</span>
            <p>{message.content}</p>
            {message.failure && <p class="failure small">Not answered: {message.failure}</p>}
            {message.citations && (
              <ol class="sources small" aria-label="Sources">
                {message.citations.map((citation, n) => (
                  <li key={n}>
                    [{n + 1}]{' '}
                    {citation.url ? (
                      <a href={citation.url} target="_blank" rel="noopener noreferrer">
                        {citation.title}
                      </a>
                    ) : (
                      citation.title
                    )}
                  </li>
                ))}
              </ol>
            )}
            {message.feedback && (
              <p class={`rating small ${message.feedback}`}>
                {message.feedback === 'up' ? 'Rated helpful by the visitor' : 'Rated not helpful by the visitor'}
              </p>
            )}
            {message.delivery && <DeliveryLine delivery={message.delivery} />}
            <time class="muted small">{formatTime(message.created_at)}</time>
            {message.role === 'assistant' && improving !== message.created_at && (
              <button
                type="button"
                class="button small ghost improve"
                onClick={() => {
                  setSaved(undefined);
                  setImproving(message.created_at);
                }}
              >
                Improve this answer
              </button>
            )}
            {message.role === 'assistant' && improving === message.created_at && (
              <ImproveAnswerForm
                question={questionBefore(c.messages, i)}
                busy={action.busy}
                onSave={(body) => improve(message, body)}
                onCancel={() => setImproving(undefined)}
              />
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

function LeadLink({ chatbot, lead }: { chatbot: Chatbot; lead: LeadName }) {
  return (
    <a class="lead-link small" href={href('chatbots', chatbot.id, 'leads', lead.lead_id)}>
      View lead
    </a>
  );
}

/** The visitor message an AI reply answered: the last one before it. */
const DELIVERY: Record<MessageDelivery['status'], string> = {
  accepted: 'Accepted by WhatsApp',
  sent: 'Sent on WhatsApp',
  delivered: 'Delivered on WhatsApp',
  read: 'Read on WhatsApp',
  failed: 'Not delivered on WhatsApp',
};

/** How far a reply sent through WhatsApp's Cloud API got, and why it failed. */
function DeliveryLine({ delivery }: { delivery: MessageDelivery }) {
  return (
    <p class={`delivery small ${delivery.status}`}>
      {DELIVERY[delivery.status]} ({formatTime(delivery.at)}){delivery.error ? `: ${delivery.error}` : ''}
    </p>
  );
}

function questionBefore(messages: Message[], reply: number): string {
  for (let i = reply - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return '';
}
