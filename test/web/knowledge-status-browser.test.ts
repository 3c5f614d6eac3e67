import t from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { FakeOpenAiEmbeddings } from '../fakes/fake-openai-embeddings.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, DashboardClient, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

t.test(
  'while a new gateway re-embeds every source, the sources page says so with its progress, then stops saying it',
  { skip: chromiumMissing },
  async (t) => {
    const provider = await new FakeOpenAiEmbeddings().start();
    const keys = { SEARCH_ENGINE: 'in-process', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: provider.url };
    const gw = await startGateway(keys);
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await provider.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Acme Bot' });
    const source = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.');
    await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion');

    // A gateway with another EMBEDDINGS; the provider holds its answers until the page has been seen.
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    provider.gate = () => opened;
    const config = loadConfig({
      ...keys,
      EMBEDDINGS: 'openai:fake-embed',
      REDIS_URL: gw.redis.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    const mover = await startApp(config, createLogger('silent'), {
      shutdownGraceMs: 1000,
      spaceMigration: { leaseMs: 3000, pollMs: 20 },
    });
    t.teardown(() => mover.stop());
    const copying = await until(async () => {
      const state = await services.spaces.migration();
      return state?.phase === 'copying' && state.total === 1 ? state : undefined;
    }, 'the copy to begin');

    const api = await DashboardClient.signIn(gw.baseUrl, owner);
    const status = await api.get('/dashboard/api/knowledge');
    t.equal(status.status, 200);
    t.same(status.body, {
      space: 'local-v2-384',
      embeddings: 'local',
      migration: {
        from: 'local-v2-384',
        to: 'openai-fake-embed',
        embeddings: 'openai:fake-embed',
        phase: 'copying',
        done: 0,
        total: 1,
        started_at: formatTimestamp(copying.started_at),
        updated_at: formatTimestamp((await services.spaces.migration())!.updated_at),
        error: null,
      },
    });
    const signedOut = await new DashboardClient(gw.baseUrl).get('/dashboard/api/knowledge');
    t.equal(signedOut.status, 401);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Acme Bot' }).click();
    await page.getByRole('link', { name: 'Sources' }).click();
    const notice = page.locator('.notice.info', { hasText: 'Re-embedding' });
    await notice.waitFor();
    t.equal(
      await notice.textContent(),
      'Re-embedding every source for openai-fake-embed: 0 of 1 passages. Chatbots keep answering from ' +
        'local-v2-384 until it is done; sources added meanwhile wait for it.',
    );
    t.equal(await notice.getAttribute('role'), 'status');

    open();
    await mover.migration!.ended();
    // The page reads the status again every three seconds while it is under way, and then says nothing.
    await page.locator('.notice.info').waitFor({ state: 'detached', timeout: 10_000 });
    t.equal(gw.app.retrieval.space, 'openai-fake-embed');
    t.same(errors, []);
  },
);
