/**
 * Chatbots as SPEC's public API and the dashboard show them. Part of the contract (see README.md
 * beside this file).
 */

/** The LLM provider a chatbot answers with. */
export type Provider = 'gemini' | 'chatgpt' | 'ollama';

/** SPEC's chatbot list view: exactly these fields. */
export interface ChatbotListView {
  id: string;
  name: string;
  slug: string;
  provider: Provider;
  is_active: boolean;
  created_at: string;
}

/** SPEC's chatbot detail view: the list view plus system prompt and fallback message. */
export interface ChatbotDetailView extends ChatbotListView {
  system_prompt: string;
  fallback_message: string;
}

/** The dashboard's chatbot: SPEC's detail view plus the model, which only the owner sees. */
export interface DashboardChatbot extends ChatbotDetailView {
  model: string;
}

/** `POST /dashboard/api/chatbots`: what is left out takes the server's default. */
export interface NewChatbotBody {
  name: string;
  provider?: string;
  model?: string;
  system_prompt?: string;
  fallback_message?: string;
}

/** `PATCH /dashboard/api/chatbots/{id}`: what is left out stays as it was; `is_active` pauses or resumes. */
export type ChatbotPatchBody = Partial<NewChatbotBody> & { is_active?: boolean };
