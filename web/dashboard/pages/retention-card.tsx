import { useEffect, useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import type { Chatbot, RetentionSettings, Settings, SettingsPatch } from '../types.ts';
import { useAction, useResource } from '../use-resource.ts';

/** The form's fields: a number of days, or empty to keep for ever. */
interface RetentionDraft {
  conversations: string;
  leads: string;
}

function draftOf(retention: RetentionSettings): RetentionDraft {
  return {
    conversations: retention.conversations_days === null ? '' : String(retention.conversations_days),
    leads: retention.leads_days === null ? '' : String(retention.leads_days),
  };
}

/** Empty keeps for ever; anything else goes to the gateway as a number, which checks it (and says what is wrong). */
function daysOf(field: string): number | null {
  return field.trim() === '' ? null : Number(field.trim());
}

function describe(retention: RetentionSettings): string {
  const conversations =
    retention.conversations_days === null
      ? 'Conversations are kept for ever'
      : `Conversations are deleted ${retention.conversations_days} days after their last message`;
  const leads =
    retention.leads_days === null
      ? 'leads are kept for ever.'
      : `leads ${retention.leads_days} days after they were left.`;
  return `${conversations}; ${leads}`;
}

/**
 * How long the chatbot keeps conversations and leads (`bot configure --retention-days`,
 * `--lead-retention-days`): the gateways delete older ones every hour.
 */
export function RetentionCard({ chatbot }: { chatbot: Chatbot }) {
  const path = `/chatbots/${chatbot.id}/settings`;
  const settings = useResource<Settings>(path);
  const action = useAction();
  const [saved, setSaved] = useState('');
  const [draft, setDraft] = useState<RetentionDraft | undefined>(undefined);
  useEffect(() => {
    if (settings.data) setDraft(draftOf(settings.data.retention));
  }, [settings.data]);
  if (!draft || !settings.data) return null;
  const save = () => {
    setSaved('');
    void action.run(async () => {
      const retention = { conversations_days: daysOf(draft.conversations), leads_days: daysOf(draft.leads) };
      await send('PATCH', path, { retention } satisfies SettingsPatch);
      await settings.reload();
      setSaved(`Saved. ${describe(retention)}`);
    });
  };
  return (
    <form
      class="card stack retention"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h2>Data retention</h2>
      <Notice>{action.error || settings.error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <label>
        Delete conversations with no message for (days)
        <input
          name="conversations_days"
          type="number"
          min={1}
          max={3650}
          placeholder="keep for ever"
          value={draft.conversations}
          onInput={(event) => {
            const conversations = event.currentTarget.value;
            setDraft((current) => current && { ...current, conversations });
          }}
        />
      </label>
      <label>
        Delete leads left more than (days) ago
        <input
          name="leads_days"
          type="number"
          min={1}
          max={3650}
          placeholder="keep for ever"
          value={draft.leads}
          onInput={(event) => {
            const leads = event.currentTarget.value;
            setDraft((current) => current && { ...current, leads });
          }}
        />
      </label>
      <p class="muted small">
        {describe(settings.data.retention)} Leave a field empty to keep for ever. Deleting happens about every hour and
        takes a conversation's messages, ratings and notes with it; a conversation still going on is never deleted. To
        erase one visitor's conversation at once, open it and delete it.
      </p>
      <div class="actions">
        <button type="submit" class="button primary" disabled={action.busy}>
          Save retention
        </button>
      </div>
    </form>
  );
}
