import { PROVIDER_SETTING } from '../contract/provider.ts';
import type { Chatbot, Provider } from '../chatbots/chatbot.ts';
import type { QueryEngineProbe } from '../rag/retrieval-setup.ts';
import type { SpaceMigrationState, SpaceSetting } from '../store/embedding-space-store.ts';
import type { GatewaySetup } from '../store/gateway-presence.ts';

/** One thing `doctor` checked: a problem stops visitors getting answers; a warning limits what works. */
export interface Finding {
  check: 'redis' | 'gateways' | 'query_engine' | 'embeddings' | 'providers' | 'public_url';
  status: 'ok' | 'warning' | 'problem';
  detail: string;
  /** What to do about it (absent when it is fine). */
  fix?: string;
}

/** The Redis server as `INFO` and `CONFIG GET save` describe it. */
export interface RedisFacts {
  version: string;
  /** `appendonly yes`. */
  aof: boolean;
  /** Whether RDB snapshots are configured; undefined when the server refuses CONFIG (a managed Redis). */
  snapshots: boolean | undefined;
}

/** What `doctor` looks at, read from Redis. */
export interface DoctorInput {
  redis: RedisFacts;
  queryEngine: QueryEngineProbe;
  embeddings: {
    /** The space the gateways answer from; undefined before any gateway ran. */
    active: SpaceSetting | undefined;
    migration: SpaceMigrationState | undefined;
    /** The space each running gateway serves, by gateway id. */
    served: Record<string, string>;
  };
  /** Gateways running now. */
  gateways: number;
  /** What the last gateway to start was set up with; undefined when none has run on this Redis. */
  setup: GatewaySetup | undefined;
  /** The PUBLIC_URL the gateways published, if any did. */
  publicUrl: string | undefined;
  chatbots: Array<Pick<Chatbot, 'id' | 'name' | 'provider'>>;
}

/**
 * A chatbot's provider the gateways cannot call (undefined when they can, or when no gateway has run
 * yet and nobody knows): what `bot create` and `bot update` warn of, beside their JSON.
 */
export function providerWarning(
  bot: Pick<Chatbot, 'id' | 'name' | 'provider'>,
  setup: GatewaySetup | undefined,
): string | undefined {
  if (setup === undefined || setup.providers[bot.provider]) return undefined;
  const setting = PROVIDER_SETTING[bot.provider];
  return `the gateways have no ${setting}: chatbot "${bot.name}" (${bot.id}) answers its visitors with its fallback message and API calls with "LLM provider error." until ${setting} is set for them, or it uses another provider`;
}

/**
 * What is misconfigured and what to do about it: no gateway running, a chatbot whose provider the
 * gateways cannot call (every visitor would read "LLM provider error."), no PUBLIC_URL. `ok` is false
 * when there is a problem; warnings leave it true.
 */
export function diagnose(input: DoctorInput): { ok: boolean; checks: Finding[] } {
  const checks: Finding[] = [
    redisFinding(input.redis),
    input.gateways > 0
      ? { check: 'gateways', status: 'ok', detail: `${input.gateways} running` }
      : {
          check: 'gateways',
          status: 'problem',
          detail: 'no gateway is running on this Redis: visitors get no answers and sources are not ingested',
          fix: 'start one: npm start',
        },
  ];
  checks.push(
    input.queryEngine.usable
      ? { check: 'query_engine', status: 'ok', detail: "this Redis's query engine can serve retrieval" }
      : {
          check: 'query_engine',
          status: 'ok',
          detail: `retrieval runs in each gateway's memory (${input.queryEngine.reason}); fine for most installs, see the operator guide for large ones`,
        },
  );
  const embeddings = embeddingsFinding(input.embeddings);
  if (embeddings) checks.push(embeddings);
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

function redisFinding(redis: RedisFacts): Finding {
  const kept = [redis.aof && 'appendonly', redis.snapshots && 'snapshots'].filter(Boolean).join(' and ');
  if (kept === '' && redis.snapshots === false) {
    return {
      check: 'redis',
      status: 'warning',
      detail: `Redis ${redis.version} keeps nothing on disk (appendonly no, no snapshots): a restart loses every account, chatbot and conversation`,
      fix: 'set appendonly yes on the Redis server (the managed one and docker-compose.yml do)',
    };
  }
  const persistence = kept === '' ? 'appendonly no; snapshots unknown' : `kept on disk by ${kept}`;
  return { check: 'redis', status: 'ok', detail: `Redis ${redis.version}, ${persistence}` };
}

function embeddingsFinding(input: DoctorInput['embeddings']): Finding | undefined {
  const { active, migration, served } = input;
  if (active === undefined) return undefined;
  if (migration?.phase === 'failed') {
    return {
      check: 'embeddings',
      status: 'warning',
      detail: `re-embedding from ${migration.from} into ${migration.to} failed (${migration.error ?? 'no reason recorded'}); the gateways still answer from ${active.space}`,
      fix: `start a gateway with EMBEDDINGS=${migration.to_embeddings} to try again, or keep EMBEDDINGS=${active.embeddings} on every gateway`,
    };
  }
  if (migration?.phase === 'copying' || migration?.phase === 'switched') {
    return {
      check: 'embeddings',
      status: 'ok',
      detail: `re-embedding from ${migration.from} into ${migration.to}: ${migration.done} of ${migration.total} chunks (switchboard status follows it)`,
    };
  }
  const spaces = [...new Set(Object.values(served))].sort();
  if (spaces.length > 1) {
    return {
      check: 'embeddings',
      status: 'warning',
      detail: `the running gateways answer from different embedding spaces (${spaces.join(', ')})`,
      fix: `give every gateway the same EMBEDDINGS (the recorded one is ${active.embeddings}) and restart them`,
    };
  }
  return {
    check: 'embeddings',
    status: 'ok',
    detail: `answers from ${active.space} (EMBEDDINGS=${active.embeddings})`,
  };
}
