import { send } from '../api.ts';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime } from '../format.ts';
import { href } from '../router.ts';
import type { Chatbot, ConversationSummary, Transcript } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

const SOURCES: Record<string, string> = { embed: 'Widget', telegram: 'Telegram', whatsapp: 'WhatsApp', api: 'API' };

/** Conversations on every channel, newest activity first; with a session id, that transcript. */
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
                {c.session_id}
              </a>
              <span class="badge source">{SOURCES[c.source] ?? c.source}</span>
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
  if (!transcript.data) return <Loading error={transcript.error} />;
  const c = transcript.data;
  const act = (what: 'escalate' | 'release') =>
    action.run(() => send('POST', `${path}/${what}`)).then(transcript.reload);
  return (
    <div class="card stack transcript-view">
      <p class="crumbs">
        <a href={href('chatbots', chatbot.id, 'conversations')}>Conversations</a> /
      </p>
      <h2 class="session">{c.session_id}</h2>
      <p class="state">
        <span class="badge source">{SOURCES[c.source] ?? c.source}</span>{' '}
        {c.escalated_at ? `Escalated ${formatTime(c.escalated_at)}.` : 'Not escalated.'}{' '}
        {c.taken_over_by ? `Held by ${c.taken_over_by}: the AI is silent.` : 'The AI answers.'}
      </p>
      <Notice>{action.error}</Notice>
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
      </div>
      <ol class="transcript">
        {c.messages.map((message, i) => (
          <li key={i} class={`msg ${message.role}`}>
            <span class="role">{message.role === 'user' ? 'Visitor' : message.role === 'agent' ? 'Agent' : 'AI'}</span>
            <p>{message.content}</p>
            <time class="muted small">{formatTime(message.created_at)}</time>
          </li>
        ))}
      </ol>
    </div>
  );
}
