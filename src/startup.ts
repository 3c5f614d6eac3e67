import type { Config } from './config.ts';
import { SETUP_TOKEN_TTL_HOURS } from './dashboard/owner-auth.ts';
import { listenUrl } from './http/http-server.ts';
import type { GatewaySetup } from './store/gateway-presence.ts';

/** Which providers this gateway can call: a key is set (Ollama needs none: its host has a default). */
export function callableProviders(config: Config): GatewaySetup['providers'] {
  return { chatgpt: Boolean(config.OPENAI_API_KEY), gemini: Boolean(config.GEMINI_API_KEY), ollama: true };
}

/** What this gateway is set up with, as it publishes it for the CLI (never a secret). */
export function gatewaySetup(config: Config, port: number): GatewaySetup {
  return {
    providers: callableProviders(config),
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
  /** While no owner account exists: the dashboard's first-run page with this start's one-time setup token. */
  setup_url?: string;
}

/**
 * The facts of this start. `setupToken` is the first-run token the gateway issued when no owner
 * account exists; its link carries it in the fragment, which browsers never send to a server.
 */
export function startupFacts(config: Config, setup: GatewaySetup, setupToken?: string): StartupFacts {
  const base = (config.PUBLIC_URL ?? setup.listen_url).replace(/\/+$/, '');
  const seeds = config.REDIS_URL?.map((url) => new URL(url).host);
  return {
    dashboard: `${base}/dashboard`,
    api: `${base}/api/v1`,
    widget_script: `${base}/widget.js`,
    providers: setup.providers,
    embeddings: config.EMBEDDINGS,
    data: seeds ? redisDescription(seeds, config.REDIS_CLUSTER) : `a managed redis-server under ${config.DATA_DIR}`,
    ...(setupToken && { setup_url: `${base}/dashboard/#/setup/${setupToken}` }),
  };
}

/** Where the data lives, by host (never with credentials). */
function redisDescription(seeds: string[], cluster: boolean): string {
  return seeds.length > 1 || cluster ? `Redis Cluster at ${seeds.join(', ')}` : `Redis at ${seeds[0]}`;
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
    ...(facts.setup_url
      ? [
          'Next: create the owner account at',
          `  ${facts.setup_url}`,
          `  (this link works once, for ${SETUP_TOKEN_TTL_HOURS} hours; restarting the gateway prints a new one)`,
        ]
      : [`Next: sign in at ${facts.dashboard}; npx switchboard doctor says what is missing.`]),
    '',
  ].join('\n');
}
