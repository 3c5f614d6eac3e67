import type { Chatbot, Provider } from '../chatbots/chatbot.ts';
import type { GatewaySetup } from '../store/gateway-presence.ts';

/** One thing `doctor` checked: a problem stops visitors getting answers; a warning limits what works. */
export interface Finding {
  check: 'gateways' | 'providers' | 'public_url';
  status: 'ok' | 'warning' | 'problem';
  detail: string;
  /** What to do about it (absent when it is fine). */
  fix?: string;
}

/** What `doctor` looks at, read from Redis. */
export interface DoctorInput {
  /** Gateways running now. */
  gateways: number;
  /** What the last gateway to start was set up with; undefined when none has run on this Redis. */
  setup: GatewaySetup | undefined;
  /** The PUBLIC_URL the gateways published, if any did. */
  publicUrl: string | undefined;
  chatbots: Array<Pick<Chatbot, 'id' | 'name' | 'provider'>>;
}

/** The setting each provider needs on the gateways (Ollama needs none: its host has a default). */
const PROVIDER_SETTING: Record<Provider, string> = {
  chatgpt: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  ollama: 'OLLAMA_HOST',
};

/**
 * What is misconfigured and what to do about it: no gateway running, a chatbot whose provider the
 * gateways cannot call (every visitor would read "LLM provider error."), no PUBLIC_URL. `ok` is false
 * when there is a problem; warnings leave it true.
 */
export function diagnose(input: DoctorInput): { ok: boolean; checks: Finding[] } {
  const checks: Finding[] = [
    input.gateways > 0
      ? { check: 'gateways', status: 'ok', detail: `${input.gateways} running` }
      : {
          check: 'gateways',
          status: 'problem',
          detail: 'no gateway is running on this Redis: visitors get no answers and sources are not ingested',
          fix: 'start one: npm start',
        },
  ];
  const setup = input.setup;
  if (setup === undefined) {
    checks.push({
      check: 'providers',
      status: 'problem',
      detail: 'no gateway has started on this Redis yet, so which LLM providers it can call is unknown',
      fix: 'start one: npm start',
    });
    return { ok: false, checks };
  }
  const unusable = input.chatbots.filter((bot) => !setup.providers[bot.provider]);
  for (const bot of unusable) {
    const setting = PROVIDER_SETTING[bot.provider];
    checks.push({
      check: 'providers',
      status: 'problem',
      detail: `chatbot "${bot.name}" (${bot.id}) answers with ${bot.provider}, but the gateways have no ${setting}: its visitors get its fallback message and API calls "LLM provider error."`,
      fix: `set ${setting} for the gateways and restart them, or: switchboard bot update --bot ${bot.id} --provider <one they have>`,
    });
  }
  if (unusable.length === 0) {
    const callable = (Object.keys(setup.providers) as Provider[]).filter((provider) => setup.providers[provider]);
    checks.push({
      check: 'providers',
      status: 'ok',
      detail: `every chatbot's provider can be called (the gateways have ${callable.join(', ')})`,
    });
  }
  checks.push(
    input.publicUrl
      ? { check: 'public_url', status: 'ok', detail: input.publicUrl }
      : {
          check: 'public_url',
          status: 'warning',
          detail:
            'PUBLIC_URL is not set: a widget on an https site cannot reach the gateway, Telegram cannot send to its webhook, and OAuth connections cannot sign in',
          fix: 'set PUBLIC_URL for the gateways to the https address they are reached at',
        },
  );
  return { ok: checks.every((finding) => finding.status !== 'problem'), checks };
}
