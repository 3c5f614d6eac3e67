import type { ChatbotSettings } from './chatbot-settings.ts';
import { ValidationError } from '../errors.ts';

// The chatbot: the domain model its store persists, and the rules of its fields.

export const PROVIDERS = ['gemini', 'chatgpt', 'ollama'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** A chatbot as stored. `model` and `user_id` are internal; the views pick SPEC's fields. */
export interface Chatbot {
  id: string;
  user_id: string;
  name: string;
  slug: string;
  provider: Provider;
  model: string;
  is_active: boolean;
  created_at: string;
  system_prompt: string;
  fallback_message: string;
  settings: ChatbotSettings;
}

/** What an owner supplies when creating a chatbot. */
export interface NewChatbot {
  name: string;
  provider?: string;
  model?: string;
  systemPrompt?: string;
  fallbackMessage?: string;
}

/** What an update may change: the fields of a new chatbot, and whether it answers (pause). */
export type ChatbotPatch = Partial<NewChatbot> & { isActive?: boolean };

export const DEFAULT_MODELS: Record<Provider, string> = {
  chatgpt: 'gpt-4o-mini',
  gemini: 'gemini-2.5-flash',
  ollama: 'llama3.2',
};
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant for this website.';
export const DEFAULT_FALLBACK_MESSAGE =
  "Sorry, I don't have an answer to that right now. Please try rephrasing your question.";

/*
 * The rules of a chatbot's own fields, on creation and on every update (a ValidationError naming the
 * field otherwise).
 */

export function checkName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 100) throw new ValidationError('name must be 1 to 100 characters.');
  return name;
}

export function checkProvider(value: string): Provider {
  if (!(PROVIDERS as readonly string[]).includes(value)) {
    throw new ValidationError(`provider must be one of: ${PROVIDERS.join(', ')}.`);
  }
  return value as Provider;
}

/** A model name, trimmed ('' means the provider's default). */
export function checkModel(raw: string): string {
  const model = raw.trim();
  if (model.length > 100) throw new ValidationError('model must be at most 100 characters.');
  return model;
}

export function checkSystemPrompt(value: string): string {
  if (value.length > 20_000) throw new ValidationError('system_prompt must be at most 20000 characters.');
  return value;
}

export function checkFallback(value: string): string {
  if (value.trim().length === 0 || value.length > 2000) {
    throw new ValidationError('fallback_message must be 1 to 2000 characters.');
  }
  return value;
}
