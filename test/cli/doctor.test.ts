import t from 'tap';
import { diagnose, type DoctorInput } from '../../src/cli/doctor.ts';

const healthy: DoctorInput = {
  redis: { version: '7.4.2', aof: true, snapshots: false },
  queryEngine: { usable: true },
  embeddings: {
    active: { space: 'local-v2-384', embeddings: 'local' },
    migration: undefined,
    served: { a: 'local-v2-384', b: 'local-v2-384' },
  },
  gateways: 2,
  setup: {
    providers: { chatgpt: true, gemini: true, ollama: true },
    listen_url: 'http://0.0.0.0:8080',
    default_plan: 'free',
  },
  publicUrl: 'https://bots.example.com',
  chatbots: [],
};

const finding = (input: Partial<DoctorInput>, check: string) =>
  diagnose({ ...healthy, ...input }).checks.find((entry) => entry.check === check);

t.test('nothing to fix', async (t) => {
  t.same(diagnose(healthy), {
    ok: true,
    checks: [
      { check: 'redis', status: 'ok', detail: 'Redis 7.4.2, kept on disk by appendonly' },
      { check: 'gateways', status: 'ok', detail: '2 running' },
      { check: 'query_engine', status: 'ok', detail: "this Redis's query engine can serve retrieval" },
      { check: 'embeddings', status: 'ok', detail: 'answers from local-v2-384 (EMBEDDINGS=local)' },
      {
        check: 'providers',
        status: 'ok',
        detail: "every chatbot's provider can be called (the gateways have chatgpt, gemini, ollama)",
      },
      { check: 'public_url', status: 'ok', detail: 'https://bots.example.com' },
    ],
  });
});

t.test("Redis's persistence: nothing on disk is a warning; snapshots, or CONFIG refused, are not", async (t) => {
  t.same(finding({ redis: { version: '7.0.15', aof: false, snapshots: false } }, 'redis'), {
    check: 'redis',
    status: 'warning',
    detail:
      'Redis 7.0.15 keeps nothing on disk (appendonly no, no snapshots): a restart loses every account, chatbot and conversation',
    fix: 'set appendonly yes on the Redis server (the managed one and docker-compose.yml do)',
  });
  t.same(finding({ redis: { version: '7.0.15', aof: true, snapshots: true } }, 'redis'), {
    check: 'redis',
    status: 'ok',
    detail: 'Redis 7.0.15, kept on disk by appendonly and snapshots',
  });
  t.same(finding({ redis: { version: '7.2.4', aof: false, snapshots: undefined } }, 'redis'), {
    check: 'redis',
    status: 'ok',
    detail: 'Redis 7.2.4, appendonly no; snapshots unknown',
  });
  t.equal(diagnose({ ...healthy, redis: { version: '7.0.15', aof: false, snapshots: false } }).ok, true);
});

t.test('the embedding space: gateways that disagree, a re-embedding under way or failed', async (t) => {
  const embeddings = healthy.embeddings;
  t.same(
    finding(
      { embeddings: { ...embeddings, served: { a: 'local-v2-384', b: 'openai-text-embedding-3-small' } } },
      'embeddings',
    ),
    {
      check: 'embeddings',
      status: 'warning',
      detail:
        'the running gateways answer from different embedding spaces (local-v2-384, openai-text-embedding-3-small)',
      fix: 'give every gateway the same EMBEDDINGS (the recorded one is local) and restart them',
    },
  );
  const migration = {
    from: 'local-v2-384',
    to: 'openai-text-embedding-3-small',
    to_embeddings: 'openai:text-embedding-3-small',
    phase: 'copying' as const,
    done: 40,
    total: 100,
    started_at: 1,
    updated_at: 2,
  };
  t.same(
    finding(
      { embeddings: { ...embeddings, migration, served: { a: 'local-v2-384', b: 'local-v2-384' } } },
      'embeddings',
    ),
    {
      check: 'embeddings',
      status: 'ok',
      detail:
        're-embedding from local-v2-384 into openai-text-embedding-3-small: 40 of 100 chunks (switchboard status follows it)',
    },
  );
  t.same(
    finding(
      { embeddings: { ...embeddings, migration: { ...migration, phase: 'failed', error: 'HTTP 401' } } },
      'embeddings',
    ),
    {
      check: 'embeddings',
      status: 'warning',
      detail:
        're-embedding from local-v2-384 into openai-text-embedding-3-small failed (HTTP 401); the gateways still answer from local-v2-384',
      fix: 'start a gateway with EMBEDDINGS=openai:text-embedding-3-small to try again, or keep EMBEDDINGS=local on every gateway',
    },
  );
  t.equal(finding({ embeddings: { active: undefined, migration: undefined, served: {} } }, 'embeddings'), undefined);
  t.same(
    finding(
      {
        queryEngine: {
          usable: false,
          reason: 'this is Redis 7.2, whose query engine has no ADDSCORES (7.4 or later needed)',
        },
      },
      'query_engine',
    ),
    {
      check: 'query_engine',
      status: 'ok',
      detail:
        "retrieval runs in each gateway's memory (this is Redis 7.2, whose query engine has no ADDSCORES (7.4 or later needed)); fine for most installs, see the operator guide for large ones",
    },
  );
});
