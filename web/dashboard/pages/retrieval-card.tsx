import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import type { Chatbot, Settings, SettingsPatch } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** How the chatbot searches its sources: query rewrite on or off (`bot configure --query-rewrite`), saved at once. */
export function RetrievalCard({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  const action = useAction();
  const [saved, setSaved] = useState('');
  // The box shows the owner's click while it is saved; a failed save puts back what is stored.
  const [pending, setPending] = useState<boolean | undefined>(undefined);
  const toggle = (on: boolean) => {
    setSaved('');
    setPending(on);
    void action
      .run(async () => {
        await send('PATCH', path, { retrieval: { query_rewrite: on } } satisfies SettingsPatch);
        await settings.reload();
        setSaved(on ? 'Query rewrite is on.' : 'Query rewrite is off.');
      })
      .finally(() => setPending(undefined));
  };
  return (
    <div class="card stack">
      <h2>Retrieval</h2>
      <Notice>{action.error || settings.error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <label class="check">
        <input
          type="checkbox"
          name="query_rewrite"
          checked={pending ?? settings.data?.retrieval.query_rewrite ?? false}
          disabled={!settings.data || action.busy}
          onChange={(event) => toggle(event.currentTarget.checked)}
        />
        Rewrite each question before searching the sources
      </label>
      <p class="muted small">
        Helps with follow-up and reworded questions ("and how long is its warranty?"); costs one extra LLM call per
        message.
      </p>
    </div>
  );
}
