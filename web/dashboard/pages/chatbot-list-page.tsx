import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { ChatbotForm, filledFields } from '../components/chatbot-form.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { formatTime } from '../format.ts';
import { href, navigate } from '../router.ts';
import type { Chatbot, NewChatbotBody } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** Every chatbot of the owner, and the form for a new one. */
export function ChatbotListPage() {
  const chatbots = useResource<Chatbot[]>('/chatbots');
  const [creating, setCreating] = useState(false);
  const action = useAction();
  return (
    <section>
      <div class="heading">
        <h1>Chatbots</h1>
        {!creating && (
          <button type="button" class="button primary new-chatbot" onClick={() => setCreating(true)}>
            New chatbot
          </button>
        )}
      </div>
      {creating && (
        <div class="card">
          <h2>New chatbot</h2>
          <Notice>{action.error}</Notice>
          <ChatbotForm
            submitLabel="Create chatbot"
            busy={action.busy}
            onSubmit={(fields) =>
              void action.run(async () => {
                const created = await send<Chatbot>(
                  'POST',
                  '/chatbots',
                  filledFields(fields) satisfies Partial<NewChatbotBody>,
                );
                navigate(href('chatbots', created.id, 'sources'));
              })
            }
          />
        </div>
      )}
      {!chatbots.data ? (
        <Loading error={chatbots.error} />
      ) : chatbots.data.length === 0 ? (
        <p class="empty">No chatbots yet. Create one, then add the content it should answer from.</p>
      ) : (
        <ul class="cards chatbot-list">
          {chatbots.data.map((bot) => (
            <li key={bot.id} class="card chatbot-item">
              <a href={href('chatbots', bot.id)} class="title">
                {bot.name}
              </a>
              <span class={`badge ${bot.is_active ? 'ok' : 'paused'}`}>{bot.is_active ? 'Active' : 'Paused'}</span>
              <p class="muted small">
                {bot.provider} · {bot.model} · created {formatTime(bot.created_at)}
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
