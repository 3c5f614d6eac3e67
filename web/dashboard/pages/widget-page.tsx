import { useEffect, useState } from 'preact/hooks';
import { send } from '../api.ts';
import { CopyField } from '../components/copy-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { publicBase } from '../format.ts';
import { useSession } from '../session-context.ts';
import type { Chatbot, Settings, SettingsPatch } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { AppearanceCard, EscalationCard, OriginsCard } from './widget-cards.tsx';
import { CtaEditor, LeadFieldsEditor } from './widget-editors.tsx';
import { WidgetPreview } from './widget-preview.tsx';

// Retrieval has its own card on the Settings page: the widget's save leaves it alone.
type Draft = Omit<Settings, 'chatbot_id' | 'retrieval'>;

/**
 * The website widget: the embed snippet, its look, allowed origins, lead-form fields, call-to-action
 * buttons and escalation rules, saved together (`bot configure`), with a live preview of the draft.
 */
export function WidgetPage({ chatbot }: { chatbot: Chatbot }) {
  const { session } = useSession();
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  const [draft, setDraft] = useState<Draft | undefined>(undefined);
  const [origins, setOrigins] = useState('');
  const [keywords, setKeywords] = useState('');
  const action = useAction();
  const [saved, setSaved] = useState('');
  useEffect(() => {
    if (!settings.data) return;
    const rest = withoutId(settings.data);
    setDraft(rest);
    setOrigins(rest.allowed_origins.join('\n'));
    setKeywords(rest.escalation.keywords.join(', '));
  }, [settings.data]);
  if (!draft) return <Loading error={settings.error} />;
  const snippet = `<script src="${publicBase(session.public_url)}/widget.js" data-chatbot="${chatbot.id}" async></script>`;
  const save = () =>
    void action.run(async () => {
      setSaved('');
      const keywordList = keywords.split(',').map((k) => k.trim());
      const patch = {
        ...draft,
        allowed_origins: lines(origins),
        escalation: { ...draft.escalation, keywords: keywordList.filter(Boolean) },
      } satisfies SettingsPatch;
      await send('PATCH', path, patch);
      await settings.reload();
      setSaved('Widget settings saved.');
    });
  return (
    <div class="stack">
      <div class="card">
        <h2>Embed</h2>
        <p class="muted small">Paste this tag into every page that should show the chat bubble.</p>
        <CopyField value={snippet} class="snippet" />
      </div>
      <div class="grid widget-grid">
        <form
          class="stack widget-form"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <AppearanceCard
            placeholder={chatbot.name}
            look={draft.widget}
            onChange={(widget) => setDraft({ ...draft, widget })}
          />
          <OriginsCard value={origins} onChange={setOrigins} />
          <LeadFieldsEditor
            fields={draft.lead_fields}
            onChange={(lead_fields) => setDraft({ ...draft, lead_fields })}
          />
          <CtaEditor ctas={draft.ctas} onChange={(ctas) => setDraft({ ...draft, ctas })} />
          <EscalationCard
            rules={draft.escalation}
            keywords={keywords}
            onRules={(escalation) => setDraft({ ...draft, escalation })}
            onKeywords={setKeywords}
          />
          <Notice>{action.error}</Notice>
          <Notice kind="success">{saved}</Notice>
          <div>
            <button class="button primary save-widget" type="submit" disabled={action.busy}>
              Save widget settings
            </button>
          </div>
        </form>
        <div class="preview-column">
          <h2>Preview</h2>
          <WidgetPreview chatbot={chatbot} settings={draft} />
        </div>
      </div>
    </div>
  );
}

function lines(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function withoutId(settings: Settings): Draft {
  const { allowed_origins, lead_fields, ctas, escalation, widget } = settings;
  return { allowed_origins, lead_fields, ctas, escalation, widget };
}
