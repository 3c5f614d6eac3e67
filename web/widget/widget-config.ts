import { parseConfig, type WidgetConfig } from './protocol.ts';

/** The config fetch's outcome: the config, or why there is none. */
export type ConfigResult = { ok: true; config: WidgetConfig } | { ok: false; reason: string };

/** Fetches `GET <origin>/widget/v1/config?chatbot_id=<id>`; never rejects. */
export async function fetchConfig(origin: string, chatbotId: string): Promise<ConfigResult> {
  const url = new URL('/widget/v1/config', origin);
  url.searchParams.set('chatbot_id', chatbotId);
  try {
    const response = await fetch(url.href, { credentials: 'omit' });
    if (response.status === 404) return { ok: false, reason: `chatbot ${chatbotId} not found` };
    if (!response.ok) return { ok: false, reason: `config request failed with HTTP ${response.status}` };
    const config = parseConfig(await response.json());
    return config ? { ok: true, config } : { ok: false, reason: 'config response is malformed' };
  } catch {
    return { ok: false, reason: 'config request failed' };
  }
}
