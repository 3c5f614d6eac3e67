import { Notice } from '../components/notice.tsx';
import { SettingToggle } from '../components/setting-toggle.tsx';
import type { Chatbot, Settings } from '../types.ts';
import { useResource } from '../use-resource.ts';

/**
 * How the chatbot's answers are given: citations in chats and in API replies, and whether it answers only
 * from its sources (`bot configure --citations`, `--api-citations`, `--sources-only`).
 */
export function AnswersCard({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  return (
    <div class="card stack">
      <h2>Answers</h2>
      <Notice>{settings.error}</Notice>
      <SettingToggle
        settings={settings}
        path={path}
        name="citations"
        label="Cite the sources of each answer"
        value={(data) => data.answers.citations}
        patch={(on) => ({ answers: { citations: on } })}
        saved={(on) => (on ? 'Answers cite their sources.' : 'Answers no longer cite their sources.')}
      />
      <p class="muted small">
        The widget shows numbered source chips under an answer (with a link for web pages, videos and connected
        documents; text and files show their title only); Telegram and WhatsApp get a short "Sources:" list.
      </p>
      <SettingToggle
        settings={settings}
        path={path}
        name="api_citations"
        label="Citations in API replies"
        value={(data) => data.answers.api_citations}
        patch={(on) => ({ answers: { api_citations: on } })}
        saved={(on) => (on ? 'API replies cite their sources.' : 'API replies have no citations.')}
      />
      <p class="muted small">
        Off, the REST API's replies are plain text. On, they keep [1]-style markers and end with a "Sources:" list.
      </p>
      <SettingToggle
        settings={settings}
        path={path}
        name="sources_only"
        label="Answer only from the sources"
        value={(data) => data.answers.sources_only}
        patch={(on) => ({ answers: { sources_only: on } })}
        saved={(on) => (on ? 'Answers come only from the sources.' : 'The AI answers every question.')}
      />
      <p class="muted small">
        When nothing in the sources is close to a question, the chatbot does not ask the AI: it replies with the
        fallback message and offers a person (or the contact form when nobody is online).
      </p>
    </div>
  );
}
