import { useState } from 'preact/hooks';
import { PROVIDER_SETTING, type Chatbot, type NewChatbotBody, type Provider } from '../types.ts';
import { ProviderWarning, useProviders } from './provider-status.tsx';

/** The fields of a chatbot the owner edits, as the management API names them. */
export type ChatbotFields = Required<Omit<NewChatbotBody, 'provider'>> & { provider: Provider };

const PROVIDERS: Array<[Provider, string]> = [
  ['chatgpt', 'ChatGPT (OpenAI)'],
  ['gemini', 'Gemini (Google)'],
  ['ollama', 'Ollama (self-hosted)'],
];

/** The chatbot form for creating and editing; the server checks every rule and names the field. */
export function ChatbotForm(props: {
  initial?: Chatbot;
  submitLabel: string;
  busy: boolean;
  onSubmit: (fields: ChatbotFields) => void;
}) {
  const [fields, setFields] = useState<ChatbotFields>({
    name: props.initial?.name ?? '',
    provider: props.initial?.provider ?? 'chatgpt',
    model: props.initial?.model ?? '',
    system_prompt: props.initial?.system_prompt ?? '',
    fallback_message: props.initial?.fallback_message ?? '',
  });
  const providers = useProviders();
  // Changes apply to the latest fields, not to this render's: inputs that land before the next render
  // (autofill) must not undo each other.
  const set = (name: keyof ChatbotFields) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement).value;
    setFields((current) => ({ ...current, [name]: value }));
  };
  return (
    <form
      class="chatbot-form stack"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit(fields);
      }}
    >
      <label>
        Name
        <input name="name" required maxLength={100} value={fields.name} onInput={set('name')} />
      </label>
      <div class="row">
        <label>
          Provider
          <select
            name="provider"
            value={fields.provider}
            onChange={(event) => {
              // Another provider's model names mean nothing here: fall back to the new provider's default.
              const provider = event.currentTarget.value as Provider;
              setFields((current) => ({ ...current, provider, model: '' }));
            }}
          >
            {PROVIDERS.map(([value, label]) => (
              <option key={value} value={value}>
                {providers.data?.some((status) => status.provider === value && !status.configured)
                  ? `${label}: no ${PROVIDER_SETTING[value]} on this server`
                  : label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <input name="model" placeholder="the provider's default" value={fields.model} onInput={set('model')} />
        </label>
      </div>
      <ProviderWarning provider={fields.provider} statuses={providers.data} />
      <label>
        System prompt
        <textarea
          name="system_prompt"
          rows={6}
          placeholder="A generic helpful-assistant prompt"
          value={fields.system_prompt}
          onInput={set('system_prompt')}
        />
      </label>
      <label>
        Fallback message
        <textarea
          name="fallback_message"
          rows={2}
          placeholder="What the chatbot says when it cannot answer"
          value={fields.fallback_message}
          onInput={set('fallback_message')}
        />
      </label>
      <div>
        <button class="button primary" type="submit" disabled={props.busy}>
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}

/** Only the fields the owner filled in: empty ones take the server's defaults on create. */
export function filledFields(fields: ChatbotFields): Partial<ChatbotFields> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]: [string, string]) => value.trim() !== ''));
}
