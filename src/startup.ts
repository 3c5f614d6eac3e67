import type { Config } from './config.ts';
import { listenUrl } from './http/http-server.ts';
import type { GatewaySetup } from './store/gateway-presence.ts';

/** What this gateway is set up with, as it publishes it for the CLI (never a secret). */
export function gatewaySetup(config: Config, port: number): GatewaySetup {
  return {
    // Ollama needs no key: its host has a default.
    providers: { chatgpt: Boolean(config.OPENAI_API_KEY), gemini: Boolean(config.GEMINI_API_KEY), ollama: true },
    listen_url: listenUrl(config.HOST, port),
    default_plan: config.DEFAULT_PLAN,
  };
}

/** What an operator needs once the gateway listens: where to go, and what it runs with. */
export interface StartupFacts {
  dashboard: string;
  api: string;
  widget_script: string;
  providers: GatewaySetup['providers'];
  embeddings: string;
  /** Where the data lives: the Redis server's address (never its credentials), or the managed one's directory. */
  data: string;
}

export function startupFacts(config: Config, setup: GatewaySetup): StartupFacts {
  const base = (config.PUBLIC_URL ?? setup.listen_url).replace(/\/+$/, '');
  const redis = config.REDIS_URL ? new URL(config.REDIS_URL) : undefined;
  return {
    dashboard: `${base}/dashboard`,
    api: `${base}/api/v1`,
    widget_script: `${base}/widget.js`,
    providers: setup.providers,
    embeddings: config.EMBEDDINGS,
    data: redis ? `Redis at ${redis.host}` : `a managed redis-server under ${config.DATA_DIR}`,
  };
}

/** The same facts for a person at a terminal, with the next step. */
export function startupBanner(facts: StartupFacts): string {
  const providers = Object.entries(facts.providers)
    .map(([provider, callable]) => (callable ? provider : `${provider} (no API key)`))
    .join(', ');
  return [
    'Switchboard is running.',
    `  Dashboard   ${facts.dashboard}`,
    `  API         ${facts.api}`,
    `  Widget      <script src="${facts.widget_script}" data-chatbot="CHATBOT_ID" defer></script>`,
    `  Providers   ${providers}`,
    `  Embeddings  ${facts.embeddings}`,
    `  Data        ${facts.data}`,
    'Next: npx switchboard doctor (what is missing); the first owner: npx switchboard user create --email …',
    '',
  ].join('\n');
}
