import t from 'tap';
import { startApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { ChunkStore } from '../../src/store/chunk-store.ts';
import { EmbeddingSpaceStore } from '../../src/store/embedding-space-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { FakeOpenAiEmbeddings } from '../fakes/fake-openai-embeddings.ts';
import { startRedis } from '../support/redis-server.ts';
import { scaleAccount } from '../support/gateway.ts';
import { until } from '../support/until.ts';
import { runCliJson } from '../support/cli.ts';
import { formatTimestamp } from '../../src/timestamp.ts';

// Gateways started with another EMBEDDINGS than the one the stored chunks are in re-embed them into
// their own space, once across gateways, while every gateway keeps answering from the old space; then
// all switch and the old chunks go. Vectors of the wrong size are refused and never stored.

const redis = await startRedis();
t.teardown(() => redis.stop());
const provider = await new FakeOpenAiEmbeddings().start();
t.teardown(() => provider.stop());
const client = await connectRedis({ url: redis.url }, createLogger('silent'));
t.teardown(() => client.close());
const keys = new RedisKeys('sb:');
const spaces = new EmbeddingSpaceStore(client, keys);
// Every gateway has the provider's key: after the switch each embeds questions with it.
const base = {
  REDIS_URL: redis.url,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  SEARCH_ENGINE: 'in-process',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: provider.url,
};
const openai = (model: string) => ({ ...base, EMBEDDINGS: `openai:${model}` });
const cliEnv = { ...base, PATH: process.env.PATH ?? '' };
const FAST = { leaseMs: 3000, pollMs: 20, retryMs: 200, servedTimeoutMs: 10_000, batch: 8 };
const apps: App[] = [];
t.teardown(async () => {
  for (const app of apps.reverse()) await app.stop();
});

async function gateway(env: Record<string, string>, retryMs = FAST.retryMs): Promise<App> {
  const app = await startApp(loadConfig(env), createLogger('silent'), {
    shutdownGraceMs: 1000,
    spaceMigration: { ...FAST, retryMs },
  });
  apps.push(app);
  return app;
}

/** Whether the re-embedding into `space` has copied `count` chunks. */
async function copiedInto(space: string, count: number): Promise<boolean> {
  const state = await spaces.migration();
  return state?.to === space && state.done >= count;
}

const TOPICS = Array.from({ length: 40 }, (_, i) => `Policy ${i}: parcels to zone ${i} arrive within ${i + 2} days.`);

t.test('local → provider under retrieval load: re-embedded once, no empty answer, old chunks dropped', async (t) => {
  const first = await gateway(base);
  t.equal(first.retrieval.space, 'local-v2-384');
  const { user } = await scaleAccount(first);
  const bot = await first.services.chatbots.create(user.id, { name: 'Parcels' });
  const sources = await Promise.all(TOPICS.map((text) => first.services.intake.addText(bot.id, text)));
  for (const source of sources) {
    await until(async () => (await first.services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
  }
  const local = new ChunkStore(client, keys, 'local-v2-384');
  const target = new ChunkStore(client, keys, 'openai-fake-embed');
  t.equal(await local.count(), TOPICS.length);

  // The provider answers only once the copy is seen under way.
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  provider.gate = () => opened;

  const movers = await Promise.all([gateway(openai('fake-embed')), gateway(openai('fake-embed'))]);
  const all = [first, ...movers];
  for (const app of all) t.equal(app.retrieval.space, 'local-v2-384', 'every gateway serves the old space at first');

  let loading = true;
  const empty: string[] = [];
  let answers = 0;
  const load = Promise.all(
    all.map(async (app, i) => {
      while (loading) {
        const hits = await app.retrieval.retrieve(bot.id, 'when do parcels to zone 7 arrive');
        answers += 1;
        if (hits.length === 0) empty.push(`gateway ${i} in ${app.retrieval.space}`);
        // The local embedder answers without I/O: let the gateways' own work run between questions.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }),
  );

  const copying = await until(async () => {
    const state = await spaces.migration();
    return state?.phase === 'copying' && state.total > 0 ? state : undefined;
  }, 'the copy to begin');
  t.match(copying, { from: 'local-v2-384', to: 'openai-fake-embed', to_embeddings: 'openai:fake-embed', total: 40 });
  t.equal(await client.exists(keys.ingestPaused()), 1, 'ingestion pauses while the chunks are copied');
  // A source added meanwhile waits, then is embedded into the new space only.
  const late = await first.services.intake.addText(bot.id, 'Late policy: parcels to the moon are not delivered.');
  t.equal((await first.services.sources.get(late.id)).status, 'pending');
  // What the operator sees meanwhile (the provider holds its answers, so nothing moves); every
  // gateway's in-process index has loaded its 40 chunks long before.
  const ids = (await first.services.gateways.ids()).sort();
  const allLoaded = Object.fromEntries(ids.map((id) => [id, 'loaded']));
  await until(
    async () => JSON.stringify(await first.services.gateways.searchIndexes()) === JSON.stringify(allLoaded),
    'every index loaded',
  );
  t.same(await runCliJson(['status'], cliEnv), {
    gateways: 3,
    search_index: allLoaded,
    embeddings: {
      space: 'local-v2-384',
      embeddings: 'local',
      migration: {
        from: 'local-v2-384',
        to: 'openai-fake-embed',
        embeddings: 'openai:fake-embed',
        phase: 'copying',
        done: 0,
        total: 40,
        started_at: formatTimestamp(copying.started_at),
        updated_at: formatTimestamp((await spaces.migration())!.updated_at),
        error: null,
      },
    },
    ingestion: { queued: 1, running: 0, paused: true },
  });
  open();

  const done = await until(
    async () => {
      const state = await spaces.migration();
      return state?.phase === 'done' ? state : undefined;
    },
    'the re-embedding to end',
    30_000,
  );
  await until(async () => (await first.services.sources.get(late.id)).status === 'done', 'the late source', 30_000);
  loading = false;
  await load;

  t.match(done, { from: 'local-v2-384', to: 'openai-fake-embed', phase: 'done', done: 40, total: 40 });
  t.notOk('error' in done);
  t.same(await spaces.active(), { space: 'openai-fake-embed', embeddings: 'openai:fake-embed' });
  for (const app of all) t.equal(app.retrieval.space, 'openai-fake-embed', 'every gateway switched');
  t.same(empty, [], `no retrieval came back empty (${answers} answered)`);
  t.ok(answers > all.length, 'retrieval went on throughout');
  t.equal(await local.count(), 0, 'the old chunks are dropped');
  t.equal(await target.count(), 41);
  t.equal(await client.exists(keys.ingestPaused()), 0, 'ingestion goes on');
  t.same(await runCliJson(['status'], cliEnv), {
    gateways: 3,
    search_index: allLoaded,
    embeddings: {
      space: 'openai-fake-embed',
      embeddings: 'openai:fake-embed',
      migration: {
        from: 'local-v2-384',
        to: 'openai-fake-embed',
        embeddings: 'openai:fake-embed',
        phase: 'done',
        done: 40,
        total: 40,
        started_at: formatTimestamp(copying.started_at),
        updated_at: formatTimestamp(done.updated_at),
        error: null,
      },
    },
    ingestion: { queued: 0, running: 0, paused: false },
  });

  // Every stored text was embedded once by the provider (two gateways, one re-embedding), the late
  // source once, by the new space's ingestion; the rest are the load's questions and size probes.
  // (A text source's chunks are embedded with their title, "text", as at ingestion.)
  const stored = provider.inputs.filter((text) => text.startsWith('text\n'));
  t.same(
    stored.sort(),
    [...TOPICS, 'Late policy: parcels to the moon are not delivered.'].map((text) => `text\n${text}`).sort(),
  );
  const hits = await first.retrieval.retrieve(bot.id, 'when do parcels to zone 7 arrive');
  t.equal(hits[0]?.text, TOPICS[7]);
  t.same(
    (await first.retrieval.retrieve(bot.id, 'moon parcels')).map((hit) => hit.text)[0],
    'Late policy: parcels to the moon are not delivered.',
  );
  for (const app of movers) await app.migration?.ended();
});

t.test('vectors of another size than the new space are refused; nothing is stored, the old space stays', async (t) => {
  const served = await spaces.active();
  provider.sizeOf = (model, texts) => (model === 'other-embed' && texts[0] !== 'dimension probe' ? 200 : 384);
  t.teardown(() => (provider.sizeOf = () => provider.dimensions));
  const refused = await gateway(openai('other-embed'));
  await refused.migration!.ended();
  t.match(await spaces.migration(), {
    from: 'openai-fake-embed',
    to: 'openai-other-embed',
    phase: 'failed',
    error: 'the embedder returned a vector of 200 dimensions; the embedding space openai-other-embed has 384',
  });
  t.same(await spaces.active(), served);
  t.equal(refused.retrieval.space, 'openai-fake-embed', 'it keeps serving the recorded space');
  t.equal(await new ChunkStore(client, keys, 'openai-other-embed').count(), 0, 'no vector of the wrong size is stored');
  t.equal(await new ChunkStore(client, keys, 'openai-fake-embed').count(), 41);
  t.equal(await client.exists(keys.ingestPaused()), 0);
  t.equal(await client.exists(keys.spaceMigrationLease()), 0);
});

t.test('a gateway stopped mid-copy lets go; another resumes where it stopped, embedding nothing twice', async (t) => {
  const texts = () => provider.inputs.filter((text) => text.startsWith('text\n'));
  const before = texts().length;
  let answered = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  // Two size probes (the served space, the new one) and two batches of eight go through, then the
  // provider holds its answers.
  provider.gate = async () => {
    answered += 1;
    if (answered > 4) await opened;
  };
  t.teardown(() => (provider.gate = async () => {}));
  const stopped = await gateway(openai('third-embed'));
  await until(async () => copiedInto('openai-third-embed', 16), 'two batches copied');
  const stopping = stopped.stop();
  open();
  await stopping;
  apps.splice(apps.indexOf(stopped), 1);
  t.equal(await client.exists(keys.spaceMigrationLease()), 0, 'the lease is let go at once');
  t.equal(await client.exists(keys.ingestPaused()), 0, 'and ingestion goes on meanwhile');
  const copied = await new ChunkStore(client, keys, 'openai-third-embed').count();
  t.ok(copied >= 16 && copied < 41, `${copied} chunks were copied before the stop`);

  const resumer = await gateway(openai('third-embed'));
  await resumer.migration!.ended();
  t.match(await spaces.migration(), { from: 'openai-fake-embed', to: 'openai-third-embed', phase: 'done', total: 41 });
  t.equal(resumer.retrieval.space, 'openai-third-embed');
  const embedded = texts().slice(before);
  t.equal(embedded.length, 41, 'each chunk was embedded once across both gateways');
  t.equal(new Set(embedded).size, 41);
  t.equal(await new ChunkStore(client, keys, 'openai-fake-embed').count(), 0);
});

t.test('a re-embedding no gateway works on any more is ended when a gateway of the served space starts', async (t) => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let answered = 0;
  // The two size probes and one batch go through.
  provider.gate = async () => {
    answered += 1;
    if (answered > 3) await opened;
  };
  t.teardown(() => (provider.gate = async () => {}));
  const leaving = await gateway(openai('fourth-embed'));
  await until(async () => copiedInto('openai-fourth-embed', 8), 'a batch copied');
  const stopping = leaving.stop();
  open();
  await stopping;
  apps.splice(apps.indexOf(leaving), 1);
  t.equal((await spaces.migration())?.phase, 'copying');
  t.ok((await new ChunkStore(client, keys, 'openai-fourth-embed').count()) > 0);

  await gateway(openai('third-embed'));
  t.match(await spaces.migration(), {
    to: 'openai-fourth-embed',
    phase: 'failed',
    error: 'abandoned: no running gateway has EMBEDDINGS=openai:fourth-embed',
  });
  t.equal(await new ChunkStore(client, keys, 'openai-fourth-embed').count(), 0, 'its copies are dropped');
  t.equal(await new ChunkStore(client, keys, 'openai-third-embed').count(), 41);
  t.equal(await client.exists(keys.spaceMigrationLease()), 0);
});

t.test('a provider error is recorded and tried again, with ingestion going on in between', async (t) => {
  let refused = 0;
  provider.refuses = (model, texts) => model === 'fifth-embed' && texts[0] !== 'dimension probe' && ++refused === 1;
  t.teardown(() => (provider.refuses = () => false));
  const retrying = await gateway(openai('fifth-embed'), 1500);
  const failed = await until(async () => {
    const state = await spaces.migration();
    return state?.to === 'openai-fifth-embed' && state.error ? state : undefined;
  }, 'the failed try');
  t.match(failed, { phase: 'copying', error: '400 Invalid input.' });
  t.equal(await client.exists(keys.ingestPaused()), 0, 'ingestion is not paused between tries');
  t.equal(await client.exists(keys.spaceMigrationLease()), 1, 'the lease is kept between tries');
  await retrying.migration!.ended();
  const done = await spaces.migration();
  t.match(done, { to: 'openai-fifth-embed', phase: 'done', done: 41, total: 41 });
  t.notOk(done?.error, 'the error is cleared by the try that succeeded');
  t.equal(refused > 1, true);
  t.same(await spaces.active(), { space: 'openai-fifth-embed', embeddings: 'openai:fifth-embed' });
});

t.test(
  'a space recorded by an earlier version: served when this version can embed into it, else a clear refusal',
  async (t) => {
    const legacy = (prefix: string) => ({ ...base, REDIS_PREFIX: prefix });
    await client.set('older:embedding-space', 'openai-fake-embed');
    const older = await gateway(legacy('older:'));
    t.equal(older.migration !== undefined, true, 'the recorded space is served, and re-embedded into local');
    await older.migration!.ended();
    t.match(await new EmbeddingSpaceStore(client, new RedisKeys('older:')).migration(), {
      from: 'openai-fake-embed',
      to: 'local-v2-384',
      phase: 'done',
    });
    t.equal(older.retrieval.space, 'local-v2-384');
    t.same(await client.hGetAll('older:{ingest}:space'), { space: 'local-v2-384', embeddings: 'local' });
    t.equal(await client.exists('older:embedding-space'), 0, 'the earlier record is gone');

    await client.set('oldest:embedding-space', 'local-v1');
    await t.rejects(startApp(loadConfig(legacy('oldest:')), createLogger('silent'), { shutdownGraceMs: 1000 }), {
      name: 'UnservableEmbeddingSpaceError',
      message:
        'the stored chunks are in the embedding space local-v1, which this version cannot embed questions into ' +
        '(EMBEDDINGS=local makes local-v2-384); start a gateway of the version that stored them to re-embed them',
    });
  },
);

t.test('removing a source while a re-embedding is under way removes its chunks in both spaces', async (t) => {
  const unitKeys = new RedisKeys('unit:');
  const unitSpaces = new EmbeddingSpaceStore(client, unitKeys);
  const old = new ChunkStore(client, unitKeys, 'space-a');
  const copies = new ChunkStore(client, unitKeys, 'space-b');
  const chunk = (sourceId: string) => ({
    id: `${sourceId}:0`,
    chatbotId: 'bot',
    sourceId,
    position: 0,
    title: 'text',
    url: '',
    content: `About ${sourceId}.`,
    embedding: new Float32Array([1, 0]),
  });
  await old.save([chunk('kept'), chunk('removed')]);
  await copies.copy([chunk('kept'), chunk('removed')]);
  for (const phase of ['copying', 'switched'] as const) {
    await unitSpaces.begin({
      from: 'space-a',
      to: 'space-b',
      to_embeddings: 'b',
      phase,
      done: 0,
      total: 2,
      started_at: 1,
      updated_at: 1,
    });
    // Removed through either space (a gateway switched already, or not yet).
    const through = phase === 'copying' ? old : copies;
    t.equal(await through.removeSource('bot', 'removed'), 1);
    t.same(await old.byIds('bot', ['kept:0', 'removed:0']).then((found) => found.map((c) => c?.id)), [
      'kept:0',
      undefined,
    ]);
    t.same(await copies.byIds('bot', ['kept:0', 'removed:0']).then((found) => found.map((c) => c?.id)), [
      'kept:0',
      undefined,
    ]);
    await old.save([chunk('removed')]);
    await copies.copy([chunk('removed')]);
  }
  await unitSpaces.update({ phase: 'done' }, 2);
  t.equal(await copies.removeSource('bot', 'removed'), 1);
  t.equal((await old.byIds('bot', ['removed:0']))[0]?.id, 'removed:0', 'once it has ended, only the served space');
});

t.test('a re-embedding whose gateway died after the switch is ended by the next gateway', async (t) => {
  const ghost = new ChunkStore(client, keys, 'openai-ghost');
  const stranded = {
    id: 'gone:0',
    chatbotId: 'bot',
    sourceId: 'gone',
    position: 0,
    title: 'text',
    url: '',
    content: 'Left behind.',
    embedding: new Float32Array(384).fill(0.05),
  };
  const died = { to_embeddings: 'openai:fifth-embed', done: 41, total: 41, started_at: 1, updated_at: 1 };
  await ghost.copy([stranded]);
  await spaces.begin({ ...died, from: 'openai-ghost', to: 'openai-fifth-embed', phase: 'switched' });
  await client.hSet(keys.servedSpaces(), 'a-gateway-killed-long-ago', 'openai-ghost');
  // A gateway with the setting switched to ends it: every running gateway serves the new space.
  const ender = await gateway(openai('fifth-embed'));
  await ender.migration!.ended();
  t.match(await spaces.migration(), { from: 'openai-ghost', to: 'openai-fifth-embed', phase: 'done' });
  t.equal(await ghost.count(), 0, 'the space switched from is dropped');
  t.notOk('a-gateway-killed-long-ago' in (await spaces.served()), 'a dead gateway is not waited for, and forgotten');

  // A gateway with yet another setting, when that happened, drops it before it re-embeds.
  await ghost.copy([stranded]);
  await spaces.begin({ ...died, from: 'openai-ghost', to: 'openai-fifth-embed', phase: 'switched' });
  const next = await gateway(openai('sixth-embed'));
  await next.migration!.ended();
  t.equal(await ghost.count(), 0);
  t.match(await spaces.migration(), { from: 'openai-fifth-embed', to: 'openai-sixth-embed', phase: 'done' });
  t.equal(await new ChunkStore(client, keys, 'openai-sixth-embed').count(), 41);
});
