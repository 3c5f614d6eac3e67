import t from 'tap';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { ChunkStore } from '../../src/store/chunk-store.ts';
import { EmbeddingSpaceStore } from '../../src/store/embedding-space-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { FakeOpenAiEmbeddings } from '../fakes/fake-openai-embeddings.ts';
import { spawnGateway } from '../support/gateway-process.ts';
import { startRedis } from '../support/redis-server.ts';
import { scaleAccount } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// The gateway re-embedding into a new space is SIGKILLed mid-copy: its lease and the pause of
// ingestion lapse, another gateway with the same EMBEDDINGS takes over and embeds only what the dead
// one had not copied, and the gateways switch.

const SOURCES = 130; // more than one batch (64, or a little more as SCAN returns keys)

t.test('SIGKILL of the re-embedding gateway: another resumes after its lease lapses', async (t) => {
  const redis = await startRedis();
  const provider = await new FakeOpenAiEmbeddings().start();
  const client = await connectRedis({ url: redis.url }, createLogger('silent'));
  const keys = new RedisKeys('sb:');
  const spaces = new EmbeddingSpaceStore(client, keys);
  const env = {
    REDIS_URL: redis.url,
    LOG_LEVEL: 'warn',
    SEARCH_ENGINE: 'in-process',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: provider.url,
    REEMBED_LEASE_MS: '1500',
  };
  const apps: App[] = [];
  const start = async (extra: Record<string, string>) => {
    const config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...extra });
    const app = await startApp(config, createLogger('silent'), {
      shutdownGraceMs: 1000,
      spaceMigration: { pollMs: 20 },
    });
    apps.push(app);
    return app;
  };
  t.teardown(async () => {
    for (const app of apps) await app.stop();
    await client.close();
    await provider.stop();
    await redis.stop();
  });

  const first = await start({});
  const { user } = await scaleAccount(first);
  const bot = await first.services.chatbots.create(user.id, { name: 'Killed' });
  const texts = Array.from({ length: SOURCES }, (_, i) => `Note ${i}: locker ${i} opens with code ${1000 + i}.`);
  const sources = await Promise.all(texts.map((text) => first.services.intake.addText(bot.id, text)));
  for (const source of sources) {
    await until(async () => (await first.services.sources.get(source.id)).status === 'done', 'ingestion', 60_000);
  }

  // The size probe and the first batch are answered; the second is held until the gateway is dead.
  let answered = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  provider.gate = async () => {
    answered += 1;
    if (answered > 2) await opened;
  };
  const victim = await spawnGateway({ ...env, EMBEDDINGS: 'openai:fake-embed' });
  await until(async () => answered === 3 && ((await spaces.migration())?.done ?? 0) > 0, 'the second batch held');
  victim.child.kill('SIGKILL');
  t.same(await victim.exited, { code: null, signal: 'SIGKILL' });
  const target = new ChunkStore(client, keys, 'openai-fake-embed');
  const copiedIds = new Set<string>();
  for await (const batch of target.all()) for (const chunk of batch) copiedIds.add(chunk.id);
  t.equal(copiedIds.size, (await spaces.migration())?.done, 'the dead gateway copied its first batch');
  t.ok(copiedIds.size < SOURCES);
  t.equal(await client.exists(keys.ingestPaused()), 1, 'ingestion stays paused until its lease lapses');
  const held = provider.inputs.length;
  open();
  await until(() => provider.inputs.length > held, 'the held batch answered to nobody');
  provider.gate = async () => {};
  const before = provider.inputs.length;

  const resumer = await start({ EMBEDDINGS: 'openai:fake-embed' });
  await resumer.migration!.ended();
  t.match(await spaces.migration(), {
    from: 'local-v2-384',
    to: 'openai-fake-embed',
    phase: 'done',
    done: SOURCES,
    total: SOURCES,
  });
  for (const app of apps) t.equal(app.retrieval.space, 'openai-fake-embed');
  t.equal(await target.count(), SOURCES);
  t.equal(await new ChunkStore(client, keys, 'local-v2-384').count(), 0);
  const resumed = provider.inputs.slice(before).filter((text) => text.startsWith('text\n'));
  const expected = sources
    .map((source, i) => ({ id: `${source.id}:0`, text: `text\n${texts[i]}` }))
    .filter((chunk) => !copiedIds.has(chunk.id))
    .map((chunk) => chunk.text);
  t.same(resumed.sort(), expected.sort(), 'the resuming gateway embedded only what was not copied');
  const hits = await first.retrieval.retrieve(bot.id, 'which code opens locker 42');
  t.equal(hits[0]?.text, texts[42]);
});
