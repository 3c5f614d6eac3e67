import { send } from '../api.ts';
import { ChatbotForm } from '../components/chatbot-form.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Notice } from '../components/notice.tsx';
import { ProviderCard } from '../components/provider-status.tsx';
import { href, navigate } from '../router.ts';
import type { Chatbot, ChatbotPatchBody } from '../types.ts';
import { useAction } from '../use-resource.ts';
import { useState } from 'preact/hooks';
import { RetrievalCard } from './retrieval-card.tsx';
import { AnswersCard } from './answers-card.tsx';
import { OfficeHoursCard } from './office-hours-card.tsx';
import { RetentionCard } from './retention-card.tsx';

/**
 * Edit the chatbot (prompt, fallback, provider and model, query rewrite, citations, office hours, data
 * retention), pause or resume it, delete it.
 */
export function ChatbotSettingsPage({ chatbot, onChanged }: { chatbot: Chatbot; onChanged: () => Promise<void> }) {
  const action = useAction();
  const [saved, setSaved] = useState('');
  const save = (patch: ChatbotPatchBody, message: string) =>
    void action.run(async () => {
      setSaved('');
      await send('PATCH', `/chatbots/${chatbot.id}`, patch);
      await onChanged();
      setSaved(message);
    });
  return (
    <div class="stack">
      <Notice>{action.error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <div class="card">
        <h2>Behaviour</h2>
        <ChatbotForm
          key={chatbot.id}
          initial={chatbot}
          submitLabel="Save changes"
          busy={action.busy}
          onSubmit={(fields) => save(fields, 'Saved.')}
        />
      </div>
      <ProviderCard chatbot={chatbot} />
      <RetrievalCard key={chatbot.id} chatbot={chatbot} />
      <AnswersCard key={chatbot.id} chatbot={chatbot} />
      <OfficeHoursCard key={chatbot.id} chatbot={chatbot} />
      <RetentionCard key={chatbot.id} chatbot={chatbot} />
      <div class="card">
        <h2>Status</h2>
        <p class="muted">
          {chatbot.is_active
            ? 'Active: it answers on every channel.'
            : 'Paused: every channel answers "Chatbot is paused." and the AI is not called.'}
        </p>
        <div class="actions">
          <button
            type="button"
            class="button pause-toggle"
            disabled={action.busy}
            onClick={() => save({ is_active: !chatbot.is_active }, chatbot.is_active ? 'Paused.' : 'Resumed.')}
          >
            {chatbot.is_active ? 'Pause chatbot' : 'Resume chatbot'}
          </button>
          <ConfirmButton
            label="Delete chatbot"
            confirm="Delete it for good"
            onConfirm={() =>
              action.run(async () => {
                await send('DELETE', `/chatbots/${chatbot.id}`);
                navigate(href('chatbots'));
              })
            }
          />
        </div>
      </div>
    </div>
  );
}
