import { useEffect, useState } from 'preact/hooks';
import { send } from '../api.ts';
import { CopyField } from '../components/copy-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { publicBase } from '../format.ts';
import { useSession } from '../session-context.ts';
import type { Chatbot, Settings } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { CtaEditor, LeadFieldsEditor } from './widget-editors.tsx';
import { WidgetPreview } from './widget-preview.tsx';

type Draft = Omit<Settings, 'chatbot_id'>;

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
      const patch = {
        ...draft,
        allowed_origins: lines(origins),
        escalation: {
          ...draft.escalation,
          keywords: keywords
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
        },
      };
      await send('PATCH', path, patch);
      await settings.reload();
      setSaved('Widget settings saved.');
    });
  const look = draft.widget;
  const setLook = (name: keyof Draft['widget']) => (event: Event) =>
    setDraft({ ...draft, widget: { ...look, [name]: (event.currentTarget as HTMLInputElement).value } });
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
          <div class="card stack">
            <h2>Appearance</h2>
            <label>
              Title
              <input name="title" placeholder={chatbot.name} value={look.title} onInput={setLook('title')} />
            </label>
            <label>
              Colour
              <span class="row">
                <input type="color" name="color-picker" value={look.color} onInput={setLook('color')} />
                <input name="color" value={look.color} onInput={setLook('color')} />
              </span>
            </label>
            <label>
              Welcome message
              <textarea
                name="welcome_message"
                rows={2}
                value={look.welcome_message}
                onInput={setLook('welcome_message')}
              />
            </label>
          </div>
          <div class="card stack">
            <h2>Allowed origins</h2>
            <label>
              <span>
                One per line, like <code>https://shop.example</code>; empty allows any site.
              </span>
              <textarea
                name="allowed_origins"
                rows={3}
                value={origins}
                onInput={(event) => setOrigins(event.currentTarget.value)}
              />
            </label>
          </div>
          <LeadFieldsEditor
            fields={draft.lead_fields}
            onChange={(lead_fields) => setDraft({ ...draft, lead_fields })}
          />
          <CtaEditor ctas={draft.ctas} onChange={(ctas) => setDraft({ ...draft, ctas })} />
          <div class="card stack">
            <h2>Escalation rules</h2>
            <label class="check">
              <input
                type="checkbox"
                name="smart_intent"
                checked={draft.escalation.smart_intent}
                onChange={(event) =>
                  setDraft({ ...draft, escalation: { ...draft.escalation, smart_intent: event.currentTarget.checked } })
                }
              />
              Escalate when a visitor asks for a human (smart intent)
            </label>
            <label>
              Keywords that escalate (comma-separated)
              <input name="keywords" value={keywords} onInput={(event) => setKeywords(event.currentTarget.value)} />
            </label>
            <label>
              Escalate after this many fallback replies in a row (0: never)
              <input
                name="fallback_streak"
                type="number"
                min={0}
                max={100}
                value={draft.escalation.fallback_streak}
                onInput={(event) =>
                  setDraft({
                    ...draft,
                    escalation: { ...draft.escalation, fallback_streak: Number(event.currentTarget.value) || 0 },
                  })
                }
              />
            </label>
          </div>
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
