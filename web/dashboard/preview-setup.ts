import type { CallToAction, LeadField, WidgetConfig } from './types.ts';

/** What the preview shows in place of the saved settings: the widget configuration's public part. */
export type PreviewLook = Pick<WidgetConfig, 'title' | 'color' | 'welcome_message' | 'lead_fields' | 'ctas'>;

/** What the preview page (`/dashboard/preview`) is given by the dashboard: whose widget, its session, the draft. */
export interface PreviewSetup {
  chatbotId: string;
  sessionId: string;
  look: PreviewLook;
}

/**
 * The preview page's address: the chatbot and session in the query, the draft in the fragment (never
 * sent to the server, so no log holds it, and of any length the settings allow).
 */
export function previewUrl({ chatbotId, sessionId, look }: PreviewSetup): string {
  const query = new URLSearchParams({ chatbot: chatbotId, session: sessionId });
  return `/dashboard/preview?${query.toString()}#${encodeURIComponent(JSON.stringify(look))}`;
}

/** The setup in a preview page's address, or undefined when it holds none. */
export function readPreviewUrl(search: string, hash: string): PreviewSetup | undefined {
  const query = new URLSearchParams(search);
  const chatbotId = query.get('chatbot');
  const sessionId = query.get('session');
  if (!chatbotId || !sessionId) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(decodeURIComponent(hash.replace(/^#/, '')));
  } catch {
    return undefined;
  }
  const look = lookOf(value);
  return look && { chatbotId, sessionId, look };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

// The page takes the draft from its address, which anyone can write: only well-formed settings pass,
// and a link button only to an http(s) address (as the gateway itself allows).
function lookOf(value: unknown): PreviewLook | undefined {
  if (!isObject(value)) return undefined;
  return {
    title: text(value.title),
    color: text(value.color),
    welcome_message: text(value.welcome_message),
    lead_fields: list(value.lead_fields).map((field): LeadField => ({
      name: text(field.name),
      label: text(field.label),
      required: field.required === true,
    })),
    ctas: list(value.ctas).flatMap(ctaOf),
  };
}

function ctaOf(value: Json): CallToAction[] {
  const { action } = value;
  if (action !== 'link' && action !== 'escalate' && action !== 'message') return [];
  const cta: CallToAction = { id: text(value.id), label: text(value.label), action };
  if (action === 'link') cta.url = /^https?:\/\//i.test(text(value.url)) ? text(value.url) : '';
  if (action === 'message') cta.message = text(value.message);
  return [cta];
}
