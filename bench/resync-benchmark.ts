/**
 * The re-sync benchmark: a 1,000-page site on loopback is ingested by a gateway (crawl, extraction,
 * chunking, local embeddings, the in-process index), then synced again unchanged. The first
 * ingestion is the same-run baseline; the target is a re-sync in at most 5% of its time with no
 * embedding call. Two kinds of site: one whose sitemap gives every page's `<lastmod>` (an unchanged
 * page is not requested at all), and one that only answers conditional requests (`ETag` → 304).
 * Then a second gateway started with another `EMBEDDINGS` (OpenAI's API on loopback, vectors from the
 * local embedder) re-embeds every stored chunk into its space: its chunks/s, beside the first
 * ingestion's.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { FakeOpenAiEmbeddings } from '../test/fakes/fake-openai-embeddings.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine } from './bench-support.ts';

const PAGES = 1_000;
const TARGET_RATIO = 0.05;

/** A deterministic page of about 250 words, linking on to the next pages. */
function page(n: number): string {
  const words = ['shipping', 'returns', 'sizes', 'leather', 'warranty', 'orders', 'boots', 'care', 'refunds'];
  const paragraphs = Array.from({ length: 3 }, (_, p) =>
    Array.from({ length: 80 }, (_, w) => words[(n * 7 + p * 13 + w * 31) % words.length]).join(' '),
  );
  const links = [1, 2, 3].map((step) => `<a href="/page/${(n + step) % PAGES}">next</a>`).join(' ');
  return `<!doctype html><html><head><title>Page ${n}</title></head><body><main><h1>Topic ${n}</h1>${paragraphs
    .map((text) => `<p>Page ${n}: ${text}.</p>`)
    .join('')}${links}</main></body></html>`;
}

/** The site: every page with an ETag, a sitemap with or without `<lastmod>`; page requests counted. */
class BenchSite {
  pageRequests = 0;
  notModified = 0;
  lastmod = true;
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/sitemap.xml') {
        const entry = (n: number) =>
          `<url><loc>${this.url}/page/${n}</loc>${this.lastmod ? '<lastmod>2026-11-01</lastmod>' : ''}</url>`;
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: PAGES }, (_, n) => entry(n)).join('')}</urlset>`,
        );
        return;
      }
      const match = /^\/page\/(\d+)$/.exec(path);
      if (!match || Number(match[1]) >= PAGES) {
        res.writeHead(404);
        res.end();
        return;
      }
      this.pageRequests += 1;
      const etag = `"p${match[1]}"`;
      if (req.headers['if-none-match'] === etag) {
        this.notModified += 1;
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag });
      res.end(page(Number(match[1])));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Texts handed to the gateway's embedder, counted by wrapping its instance's `embed`. */
function countEmbeddings(app: App): { calls: number; texts: number } {
  const counter = { calls: 0, texts: 0 };
  const embedder = app.retrieval.embedder;
  const embed = embedder.embed.bind(embedder);
  embedder.embed = (texts) => {
    counter.calls += 1;
    counter.texts += texts.length;
    return embed(texts);
  };
  return counter;
}

async function waitFor<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Round {
  kind: string;
  firstMs: number;
  chunks: number;
  firstEmbedded: number;
  resyncMs: number;
  resyncCalls: number;
  pageRequests: number;
  notModified: number;
  unchanged: number;
}

async function round(
  app: App,
  site: BenchSite,
  counter: { calls: number; texts: number },
  kind: string,
): Promise<Round> {
  const { services } = app;
  const user = await services.accounts.create(`bench-${kind.replace(/\W/g, '')}-${Date.now()}@example.com`, 'scale');
  const bot = await services.chatbots.create(user.id, { name: `Resync ${kind}` });
  counter.texts = 0;
  const started = performance.now();
  const added = await services.intake.addUrl(bot.id, `${site.url}/page/0`);
  const done = await waitFor(async () => {
    const source = await services.sources.get(added.id);
    if (source.status === 'failed') throw new Error(`the first ingestion failed: ${source.error}`);
    return source.status === 'done' ? source : undefined;
  });
  const firstMs = performance.now() - started;
  if (done.page_count !== PAGES) throw new Error(`the crawl kept ${done.page_count} pages, not ${PAGES}`);
  const firstEmbedded = counter.texts;
  const chunks = (await app.retrieval.chunks.ids(bot.id, added.id)).length;
  const before = (await services.sources.lastSync(done)).at;

  counter.calls = 0;
  site.pageRequests = 0;
  site.notModified = 0;
  const resyncStarted = performance.now();
  await services.intake.syncNow(added.id);
  const last = await waitFor(async () => {
    const source = await services.sources.get(added.id);
    const sync = await services.sources.lastSync(source);
    return sync.at > before && (await services.sources.progress(source)) === '' ? sync : undefined;
  });
  const resyncMs = performance.now() - resyncStarted;
  if (last.error) throw new Error(`the re-sync failed: ${last.error}`);
  return {
    kind,
    firstMs,
    chunks,
    firstEmbedded,
    resyncMs,
    resyncCalls: counter.calls,
    pageRequests: site.pageRequests,
    notModified: site.notModified,
    unchanged: last.unchanged,
  };
}

export async function run(): Promise<number> {
  const machine = await describeMachine();
  console.log(
    `resync benchmark: a ${PAGES}-page loopback site ingested by one gateway (local embeddings, in-process ` +
      'index), then synced again unchanged; the first ingestion is the same-run baseline',
  );
  console.log(`machine: ${machine}`);
  const redis = await startRedis();
  const site = new BenchSite();
  await site.start();
  const provider = await new FakeOpenAiEmbeddings().start();
  const env = {
    REDIS_URL: redis.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CRAWL_ALLOW_PRIVATE: '1',
    CRAWL_MAX_PAGES: String(PAGES),
    SEARCH_ENGINE: 'in-process',
    EMBEDDINGS: 'local',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: provider.url,
  };
  const app = await startApp(loadConfig(env), createLogger('silent'), { shutdownGraceMs: 1000 });
  const counter = countEmbeddings(app);
  const rounds: Round[] = [];
  let migration: { ms: number; chunks: number } | undefined;
  try {
    site.lastmod = true;
    rounds.push(await round(app, site, counter, 'sitemap lastmod'));
    site.lastmod = false;
    rounds.push(await round(app, site, counter, 'ETag, 304'));
    const chunks = await app.retrieval.chunks.count();
    const started = performance.now();
    const mover = await startApp(loadConfig({ ...env, EMBEDDINGS: 'openai:bench-embed' }), createLogger('silent'), {
      shutdownGraceMs: 1000,
      spaceMigration: { pollMs: 20 },
    });
    await mover.migration!.ended();
    migration = { ms: performance.now() - started, chunks };
    const state = await app.services.spaces.migration();
    if (state?.phase !== 'done' || app.retrieval.space !== 'openai-bench-embed') {
      throw new Error(`the re-embedding did not end switched: ${JSON.stringify(state)}`);
    }
    await mover.stop();
  } finally {
    await app.stop();
    await provider.stop();
    await site.stop();
    await redis.stop();
  }
  let met = true;
  for (const r of rounds) {
    const ratio = r.resyncMs / r.firstMs;
    met &&= ratio <= TARGET_RATIO && r.resyncCalls === 0;
    console.log(
      `${r.kind}: first ingestion ${(r.firstMs / 1000).toFixed(2)} s (${r.chunks} chunks, ` +
        `${Math.round(r.chunks / (r.firstMs / 1000))} chunks/s, ${r.firstEmbedded} texts embedded); re-sync ` +
        `${(r.resyncMs / 1000).toFixed(3)} s, ratio ${ratio.toFixed(3)} (target <= ${TARGET_RATIO}), ` +
        `${r.resyncCalls} embedding calls, ${r.pageRequests} page requests (${r.notModified} answered 304), ` +
        `${r.unchanged} pages unchanged`,
    );
  }
  console.log(`target met: ${met ? 'yes' : 'no'}`);
  if (migration) {
    const first = rounds[0]!;
    const rate = migration.chunks / (migration.ms / 1000);
    const baseline = first.chunks / (first.firstMs / 1000);
    console.log(
      `re-embedding local -> openai (loopback): ${migration.chunks} chunks in ${(migration.ms / 1000).toFixed(2)} s, ` +
        `${Math.round(rate)} chunks/s (first ingestion ${Math.round(baseline)} chunks/s, ratio ${(rate / baseline).toFixed(2)}), ` +
        'from gateway start to the old space dropped',
    );
  }
  return 0;
}
