import type { Chatbot } from './store/chatbot-store.ts';
import type { Source } from './store/source-store.ts';

/** SPEC's chatbot list view: exactly these fields. */
export function chatbotListView(chatbot: Chatbot) {
  const { id, name, slug, provider, is_active, created_at } = chatbot;
  return { id, name, slug, provider, is_active, created_at };
}

/** SPEC's chatbot detail view: the list view plus system prompt and fallback message. */
export function chatbotDetailView(chatbot: Chatbot) {
  const { system_prompt, fallback_message } = chatbot;
  return { ...chatbotListView(chatbot), system_prompt, fallback_message };
}

/** SPEC's source object: exactly these fields (the failure reason is for the operator only). */
export function sourceView(source: Source) {
  const { id, type, title, url, status, page_count, created_at } = source;
  return { id, type, title, url, status, page_count, created_at };
}

/** The operator's source object (CLI): SPEC's fields plus the chatbot and the failure reason. */
export function operatorSourceView(source: Source) {
  return { ...sourceView(source), chatbot_id: source.chatbot_id, error: source.error };
}
