import type { WidgetConfig } from '../../contract/widget-protocol.ts';
import type { Chatbot } from '../../chatbots/chatbot.ts';

/** Where the widget's socket and its configuration are served. */
export const WIDGET_SOCKET_PATH = '/widget/v1/socket';
export const WIDGET_CONFIG_PATH = '/widget/v1/config';

/** How many messages the ready frame carries at most (the newest). */
export const READY_HISTORY_LIMIT = 200;

/**
 * How long a widget session handed out but never used can still be resumed (a reload of the page
 * within the hour). Short, because every anonymous connect hands one out: an unused one must cost
 * nothing for long. Once the visitor writes, the conversation itself keeps the session known.
 */
export const WIDGET_SESSION_TTL_SECONDS = 3600;

/** What the widget script needs to render a chatbot: public settings only, no prompt, no ids but its own. */
export function widgetConfig(chatbot: Chatbot, agentsOnline: boolean): WidgetConfig {
  const { widget, lead_fields, ctas } = chatbot.settings;
  return {
    chatbot_id: chatbot.id,
    name: chatbot.name,
    title: widget.title || chatbot.name,
    color: widget.color,
    welcome_message: widget.welcome_message,
    lead_fields,
    ctas,
    agents_online: agentsOnline,
  };
}

/** A widget session id as the gateway hands them out. */
export function isWidgetSessionId(value: string | null): value is string {
  return value !== null && /^embed-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}
