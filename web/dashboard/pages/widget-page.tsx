import { useEffect, useState } from 'preact/hooks';
import { ApiError, send } from '../api.ts';
import { CopyField } from '../components/copy-button.tsx';
import { Loading, Notice } from '../components/notice.tsx';
import { publicBase } from '../format.ts';
import { useSession } from '../session-context.ts';
import type { Chatbot, Settings, SettingsPatch } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';
import { AppearanceCard, EscalationCard, OriginsCard } from './widget-cards.tsx';
import {
  hasRowErrors,
  NO_ROW_ERRORS,
  prepareRows,
  rowErrorOf,
  type RowErrors,
  type RowListName,
  type WidgetDraft,
} from './widget-draft.ts';
import { CtaEditor, LeadFieldsEditor } from './widget-editors.tsx';
import { WidgetPreview } from './widget-preview.tsx';

const ROWS_REFUSED = 'Not saved: some rows need attention (see the messages next to them).';

/**
 * The website widget: the embed snippet, its look, allowed origins, lead-form fields, call-to-action
 * buttons and escalation rules, saved together (`bot configure`), beside the real widget previewing
 * the draft. A save the page or the gateway refuses keeps everything typed, with the message next to
 * the row it is about.
 */
export function WidgetPage({ chatbot }: { chatbot: Chatbot }) {
  const { session } = useSession();
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  const [draft, setDraft] = useState<WidgetDraft | undefined>(undefined);
  const [origins, setOrigins] = useState('');
  const [keywords, setKeywords] = useState('');
  const [rowErrors, setRowErrors] = useState<RowErrors>(NO_ROW_ERRORS);
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
  // Each card changes its part of the latest draft, not of the one this render saw: two inputs that
  // land before the next render (autofill, a fast typist) both count.
  const edit = (change: (current: WidgetDraft) => Partial<WidgetDraft>) =>
    setDraft((current) => current && { ...current, ...change(current) });
  const snippet = `<script src="${publicBase(session.public_url)}/widget.js" data-chatbot="${chatbot.id}" async></script>`;
  const save = () => {
    setSaved('');
    const rows = prepareRows(draft);
    setRowErrors(rows.errors);
    if (hasRowErrors(rows.errors)) {
      action.setError(ROWS_REFUSED);
      return;
    }
    void action.run(async () => {
      const keywordList = keywords.split(',').map((k) => k.trim());
      const patch = {
        ...draft,
        ctas: rows.ctas,
        lead_fields: rows.lead_fields,
        allowed_origins: lines(origins),
        escalation: { ...draft.escalation, keywords: keywordList.filter(Boolean) },
      } satisfies SettingsPatch;
      try {
        await send('PATCH', path, patch);
      } catch (caught) {
        const onRow = caught instanceof ApiError ? rowErrorOf(caught.detail, rows.from) : undefined;
        if (onRow) setRowErrors(onRow);
        throw caught;
      }
      await settings.reload();
      setSaved('Widget settings saved.');
    });
  };
  const setRows = (list: RowListName) => (errors: Record<number, string>) =>
    setRowErrors((was) => ({ ...was, [list]: errors }));
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
            onChange={(change) => edit((current) => ({ widget: { ...current.widget, ...change } }))}
          />
          <OriginsCard value={origins} onChange={setOrigins} />
          <LeadFieldsEditor
            fields={draft.lead_fields}
            errors={rowErrors.lead_fields}
            onChange={(lead_fields, errors) => {
              edit(() => ({ lead_fields }));
              setRows('lead_fields')(errors);
            }}
          />
          <CtaEditor
            ctas={draft.ctas}
            errors={rowErrors.ctas}
            onChange={(ctas, errors) => {
              edit(() => ({ ctas }));
              setRows('ctas')(errors);
            }}
          />
          <EscalationCard
            rules={draft.escalation}
            keywords={keywords}
            onRules={(escalation) => edit(() => ({ escalation }))}
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
          <WidgetPreview chatbot={chatbot} draft={draft} savedOrigins={settings.data?.allowed_origins ?? []} />
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

function withoutId(settings: Settings): WidgetDraft {
  const { allowed_origins, lead_fields, ctas, escalation, widget } = settings;
  return { allowed_origins, lead_fields, ctas, escalation, widget };
}
