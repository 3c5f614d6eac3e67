import { useEffect, useRef, useState } from 'preact/hooks';
import { send } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import { previewUrl, type PreviewLook } from '../preview-setup.ts';
import type { Chatbot, PreviewSession, PreviewSessionBody } from '../types.ts';
import { useAction } from '../use-resource.ts';
import { prepareRows, type WidgetDraft } from './widget-draft.ts';

/** How long the draft must stay unchanged before the preview reloads with it (typing reloads it once). */
export const PREVIEW_DELAY_MS = 400;

/**
 * The real widget (`/widget.js`, as the embed tag loads it) in a frame, showing the settings being
 * edited before they are saved, and answering for real in the chatbot's preview session: its
 * conversation is listed under Conversations, marked as a preview. The frame reloads with the draft
 * once the owner stops typing.
 */
export function WidgetPreview(props: { chatbot: Chatbot; draft: WidgetDraft; savedOrigins: string[] }) {
  const { chatbot } = props;
  const look = JSON.stringify(previewLook(chatbot, props.draft));
  const [shown, setShown] = useState(look);
  const [url, setUrl] = useState('');
  const action = useAction();
  // Only the latest load may set the frame (a restart racing a reload, a slow answer).
  const latest = useRef(0);
  useEffect(() => {
    const timer = setTimeout(() => setShown(look), PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [look]);
  const load = async (restart: boolean) => {
    const ticket = ++latest.current;
    const body: PreviewSessionBody = { restart };
    const opened = await action.run(() =>
      send<PreviewSession>('POST', `/chatbots/${chatbot.id}/preview-session`, body),
    );
    if (!opened || ticket !== latest.current) return;
    const setup = { chatbotId: chatbot.id, sessionId: opened.session_id, look: JSON.parse(shown) as PreviewLook };
    setUrl(previewUrl(setup));
  };
  // Every load asks for the session again: that keeps a preview session nobody has written in yet
  // known to the widget channel (it forgets unused sessions after an hour).
  useEffect(() => void load(false), [chatbot.id, shown]);
  const origin = location.origin;
  const refused = props.savedOrigins.length > 0 && !props.savedOrigins.includes(origin);
  return (
    <div class="stack preview">
      {url && <iframe key={url} class="preview-frame" title="Widget preview" src={url} />}
      <Notice>{action.error}</Notice>
      {refused && (
        <Notice kind="info">
          The preview runs on {origin}, which is not among the saved allowed origins: the widget cannot connect here
          until you add it.
        </Notice>
      )}
      <p class="muted small">
        This is the real widget with your unsaved changes. What you ask here is a real conversation (it counts toward
        your messages and reaches your webhooks), listed under Conversations as your preview. New buttons act once
        saved.
      </p>
      <div>
        <button type="button" class="button small ghost restart-preview" onClick={() => void load(true)}>
          Start a new preview conversation
        </button>
      </div>
    </div>
  );
}

/** The draft as the widget shows it: what a save would keep (blank rows dropped, new buttons with ids). */
function previewLook(chatbot: Chatbot, draft: WidgetDraft): PreviewLook {
  const rows = prepareRows(draft);
  return {
    title: draft.widget.title.trim() || chatbot.name,
    color: draft.widget.color,
    welcome_message: draft.widget.welcome_message.trim(),
    lead_fields: rows.lead_fields.filter((field) => field.name && field.label),
    ctas: rows.ctas.filter((cta) => cta.label),
  };
}
