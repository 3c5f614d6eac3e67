import { Notice } from '../components/notice.tsx';
import { SettingToggle } from '../components/setting-toggle.tsx';
import type { Chatbot, Settings } from '../types.ts';
import { useResource } from '../use-resource.ts';

/** How the chatbot searches its sources: query rewrite on or off (`bot configure --query-rewrite`), saved at once. */
export function RetrievalCard({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  return (
    <div class="card stack">
      <h2>Retrieval</h2>
      <Notice>{settings.error}</Notice>
      <SettingToggle
        settings={settings}
        path={path}
        name="query_rewrite"
        label="Rewrite each question before searching the sources"
        value={(data) => data.retrieval.query_rewrite}
        patch={(on) => ({ retrieval: { query_rewrite: on } })}
        saved={(on) => (on ? 'Query rewrite is on.' : 'Query rewrite is off.')}
      />
      <p class="muted small">
        Helps with follow-up and reworded questions ("and how long is its warranty?"); costs one extra LLM call per
        message.
      </p>
    </div>
  );
}
