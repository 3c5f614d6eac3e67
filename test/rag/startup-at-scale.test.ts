import t from 'tap';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import type { ChunkRecord } from '../../src/rag/chunk.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { runCliJson } from '../support/cli.ts';
import { scaleAccount } from '../support/gateway.ts';
import { LoadGate } from '../support/load-gate.ts';
import { LogCapture } from '../support/log-capture.ts';
import { apiFetch } from '../support/openapi-contract.ts';
import { startRedis } from '../support/redis-server.ts';
import { until } from '../support/until.ts';

// Issue 25, item 4: a gateway over a Redis holding many chunks listens before its in-process index
// has loaded them, and answers a chat from the right passage while the load is held mid-way; status
// shows how far the load has come, then that it is loaded.

const redis = await startRedis();
t.teardown(() => redis.stop());
const openai = await fakeOpenAi().start();
t.teardown(() => openai.stop());
const env = {
  REDIS_URL: redis.url,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  SEARCH_ENGINE: 'in-process',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
};
const cliEnv = { ...env, LOG_LEVEL: 'silent', PATH: process.env.PATH ?? '' };
const embedder = new LocalEmbedder();
/** Chatbots whose chunks the background load comes to first (ids in key order before any UUID). */
const FILLERS = ['00-filler-1', '00-filler-2'];
const FILLER_CHUNKS = 400;
const RETURNS = 'Unworn shoes can be returned within 30 days for a full refund.';

// A first gateway makes the account and chatbot, and the chunks go straight into Redis.
const setup = await startApp(loadConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'));
const owner = await scaleAccount(setup);
const bot = await setup.services.chatbots.create(owner.user.id, { name: 'Shop Bot', provider: 'chatgpt' });
const texts = [RETURNS, 'Orders ship within two business days.', 'Every jacket has a two-year warranty.'];
const vectors = await embedder.embed(texts);
const chunk = (chatbotId: string, sourceId: string, position: number, content: string, embedding: Float32Array) =>
  ({
    id: `${sourceId}:${position}`,
    chatbotId,
    sourceId,
    position,
    title: '',
    url: '',
    content,
    embedding,
  }) satisfies ChunkRecord;
await setup.retrieval.chunks.save(texts.map((text, i) => chunk(bot.id, 'policies', i, text, vectors[i]!)));
for (const filler of FILLERS) {
  const [vector] = await embedder.embed(['Weather report for the mountains.']);
  const chunks = Array.from({ length: FILLER_CHUNKS }, (_, i) => chunk(filler, 'weather', i, `Report ${i}.`, vector!));
  await setup.retrieval.chunks.save(chunks);
}
await setup.stop();
const TOTAL = FILLERS.length * FILLER_CHUNKS + texts.length;

const gate = new LoadGate(3);
const logs = new LogCapture();
const app: App = await startApp(loadConfig(env), createLogger('info', logs), {
  shutdownGraceMs: 1000,
  searchIndexLoading: { batchSize: 100, pace: gate.pace },
});
t.teardown(() => app.stop());
const [gatewayId] = await app.services.gateways.ids();
openai.behaviour = (request) => {
  const system = String(request.body.messages[0].content);
  return { text: system.includes(RETURNS) ? 'Returns are free within 30 days.' : 'I do not know.' };
};

async function status() {
  return runCliJson(['status'], cliEnv);
}

const statusWith = (searchIndex: string) => ({
  gateways: 1,
  search_index: { [gatewayId!]: searchIndex },
  embeddings: { space: 'local-v2-384', embeddings: 'local', migration: null },
  ingestion: { queued: 0, running: 0, paused: false },
});

t.test('a chat is answered from the right passage while the index load is held mid-way', async (t) => {
  await gate.reached();
  t.same(app.retrieval.index.progress, { loaded: 300, total: TOTAL, done: false });
  const res = await apiFetch(`http://127.0.0.1:${app.port}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Can I return my shoes?', session_id: 'api-startup' }),
  });
  t.same([res.status, await res.json()], [200, { response: 'Returns are free within 30 days.' }]);
  // The chatbot asked about was loaded first, past the held gate; the rest waits.
  t.same(app.retrieval.index.progress, { loaded: 300 + texts.length, total: TOTAL, done: false });
  t.same(logs.withMessage('in-process search index loaded'), []);
  t.same(await status(), statusWith(`${300 + texts.length}/${TOTAL} chunks`));
});

t.test('once the gate opens the load completes, and status says so', async (t) => {
  gate.open();
  const loaded = await until(() => logs.withMessage('in-process search index loaded')[0], 'the load');
  t.same(loaded, { level: 30, chunks: TOTAL, skipped_sources: 0, msg: 'in-process search index loaded' });
  t.same(app.retrieval.index.progress, { loaded: TOTAL, total: TOTAL, done: true });
  await until(
    async () => (await app.services.gateways.searchIndexes())[gatewayId!] === 'loaded',
    'the loaded index recorded',
  );
  t.same(await status(), statusWith('loaded'));
  const hits = await app.retrieval.retriever.search(FILLERS[1]!, 'weather report', 3);
  t.same(
    hits.map((hit) => hit.chunk.chatbotId),
    [FILLERS[1], FILLERS[1], FILLERS[1]],
  );
});
