import type { Request, Response, Server } from 'restify';
import { widgetConfig, WIDGET_CONFIG_PATH } from './config.ts';
import type { WidgetConfig } from '../../contract/widget-protocol.ts';
import { NotFoundError } from '../../errors.ts';
import type { AgentPresence } from '../../store/agent-presence.ts';
import type { ChatbotStore } from '../../store/chatbot-store.ts';
import { isUuid } from '../../uuid.ts';
import type { WebBundles } from '../../http/web-bundle.ts';
import { serveBundle } from '../../http/web-page.ts';

/** What the widget's HTTP side reads. */
export interface WidgetRouteDeps {
  chatbots: ChatbotStore;
  presence: AgentPresence;
  bundles: WebBundles;
}

/**
 * `GET /widget.js`, the embeddable script (cached by browsers and CDNs for five minutes, then
 * revalidated by ETag), and `GET /widget/v1/config`, a chatbot's public widget settings, readable
 * from any site that embeds it.
 */
export function registerWidgetRoutes(server: Server, deps: WidgetRouteDeps): void {
  serveBundle(server, '/widget.js', 'widget/widget.ts', deps.bundles, {
    'Cache-Control': 'public, max-age=300',
    'Access-Control-Allow-Origin': '*',
  });

  server.get(WIDGET_CONFIG_PATH, async (req: Request, res: Response) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'no-store');
    const id = (new URL(req.url ?? '/', 'http://gateway').searchParams.get('chatbot_id') ?? '').toLowerCase();
    if (!isUuid(id)) throw new NotFoundError('Chatbot not found.');
    const chatbot = await deps.chatbots.get(id);
    res.send(200, widgetConfig(chatbot, await deps.presence.anyOnline(chatbot.user_id)) satisfies WidgetConfig);
  });
}
