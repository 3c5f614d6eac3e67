import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import {
  PROVIDER_SETTING,
  type Chatbot,
  type Provider,
  type ProviderStatus,
  type ProviderTest,
  type ProviderTestBody,
} from '../types.ts';
import { useResource } from '../use-resource.ts';
import { Loading, Notice } from './notice.tsx';

/** The providers as this server can call them (loaded once per page). */
export function useProviders() {
  return useResource<ProviderStatus[]>('/providers');
}

/** A warning under the provider choice when this server has no key for it; nothing otherwise. */
export function ProviderWarning({ provider, statuses }: { provider: Provider; statuses?: ProviderStatus[] }) {
  const status = statuses?.find((entry) => entry.provider === provider);
  if (!status || status.configured) return null;
  return (
    <Notice kind="info">
      This server has no {PROVIDER_SETTING[provider]}: visitors will get the fallback message until the operator sets
      it, or choose another provider.
    </Notice>
  );
}

/**
 * Each provider's status on this server, with a "Test" that makes one tiny completion with its
 * credentials (the chatbot's own model for its provider) and shows what came back.
 */
export function ProviderCard({ chatbot }: { chatbot: Chatbot }) {
  const providers = useProviders();
  const [results, setResults] = useState<Partial<Record<Provider, ProviderTest | string>>>({});
  const [testing, setTesting] = useState<Provider | undefined>(undefined);
  const test = async (provider: Provider) => {
    setTesting(provider);
    const body: ProviderTestBody = { provider, ...(provider === chatbot.provider && { model: chatbot.model }) };
    try {
      const result = await send<ProviderTest>('POST', '/providers/test', body);
      setResults((current) => ({ ...current, [provider]: result }));
    } catch (error) {
      setResults((current) => ({ ...current, [provider]: (error as Error).message }));
    } finally {
      setTesting(undefined);
    }
  };
  return (
    <div class="card providers">
      <h2>Providers</h2>
      <p class="muted">
        What this server can call. "Test" sends one tiny message (a few tokens) with the server's own key.
      </p>
      {!providers.data ? (
        <Loading error={providers.error} />
      ) : (
        <ul class="plain-list provider-list">
          {providers.data.map((status) => {
            const result = results[status.provider];
            return (
              <li key={status.provider} class="row-item" data-provider={status.provider}>
                <strong>{status.provider}</strong>
                <span class={`badge ${status.configured ? 'ok' : 'revoked'}`}>
                  {status.configured ? 'Configured' : `No ${PROVIDER_SETTING[status.provider]}`}
                </span>
                <button
                  type="button"
                  class="button small"
                  disabled={testing !== undefined}
                  onClick={() => void test(status.provider)}
                >
                  {testing === status.provider ? 'Testing…' : 'Test'}
                </button>
                {result !== undefined && <span class="provider-result small">{describe(result)}</span>}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function describe(result: ProviderTest | string): string {
  if (typeof result === 'string') return result;
  return result.ok
    ? `${result.model} answered in ${result.latency_ms} ms: “${result.reply}”`
    : `${result.model} failed: ${result.detail}`;
}
