import t from 'tap';
import { fixedTimeClock } from '../../src/clock.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot, SHOTS } from '../support/screenshots.ts';

const DAY_US = 24 * 60 * 60 * 1_000_000;

t.test(
  'an owner adds a website synced daily, turns its schedule off, syncs it now and sees a failed sync',
  { skip: chromiumMissing },
  async (t) => {
    // A simulated clock that moves only when the test says so: the times the page shows are exact.
    let now = Date.now() * 1000;
    const site = await new FakeSite().start();
    site.routes.set('/', html('Acme Help', '<main><h1>Acme Help</h1><a href="/returns">Returns</a></main>'));
    site.routes.set('/returns', html('Returns', '<main><h1>Returns</h1><p>Within 30 days.</p></main>'));
    const gw = await startGateway(
      { CRAWL_ALLOW_PRIVATE: '1', SEARCH_ENGINE: 'in-process' },
      { clock: fixedTimeClock(() => now) },
    );
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await site.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Acme Bot' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    /** A gateway timestamp as the page shows it (the browser's locale and time zone). */
    const shown = (micros: number) =>
      page.evaluate((at) => new Date(Date.parse(at)).toLocaleString(), formatTimestamp(micros));
    const sourcesApi = `/dashboard/api/chatbots/${bot.id}/sources`;

    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Acme Bot' }).click();
    await page.getByRole('link', { name: 'Sources' }).click();

    // The website form: weekly unless told; daily is what is sent.
    const form = page.locator('form.add-url');
    t.equal(await form.getByLabel('Refresh').inputValue(), 'weekly');
    t.same(await form.getByLabel('Refresh').locator('option').allTextContents(), ['Off', 'Daily', 'Weekly']);
    await form.getByLabel('URL').fill(`${site.url}/`);
    await form.getByLabel('Refresh').selectOption('daily');
    const [added] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === sourcesApi),
      form.getByRole('button', { name: 'Add URL' }).click(),
    ]);
    t.same(JSON.parse(added.request().postData()!), { type: 'url', url: `${site.url}/`, title: '', refresh: 'daily' });
    const id = ((await added.json()) as { id: string }).id;
    const row = page.locator(`li.source-item[data-source-id="${id}"]`);

    // Crawled: when, what it found, and the next sync a day later.
    const firstSync = now;
    await row
      .locator('.next-sync')
      .filter({ hasText: await shown(firstSync + DAY_US) })
      .waitFor({ timeout: 20_000 });
    t.equal(await row.getAttribute('data-status'), 'done');
    t.equal(await row.locator('.last-sync').textContent(), `Last sync: ${await shown(firstSync)}`);
    t.equal(await row.locator('.sync-counts').textContent(), '2 added, 0 changed, 0 removed, 0 unchanged');
    t.equal(await row.locator('.next-sync').textContent(), `Next sync: ${await shown(firstSync + DAY_US)}`);
    t.equal(await row.getByLabel('Refresh').inputValue(), 'daily');
    t.equal(await row.locator('.sync-error').count(), 0);
    await page.evaluate('window.scrollTo(0, 0)');
    await readmeScreenshot(page, 'source-sync');

    // Refresh off: saved at once, no sync scheduled.
    const [patched] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/dashboard/api/sources/${id}`)),
      row.getByLabel('Refresh').selectOption('off'),
    ]);
    t.same(JSON.parse(patched.postData()!), { refresh: 'off' });
    await row.locator('.next-sync').filter({ hasText: 'Next sync: not scheduled' }).waitFor();
    t.equal(await row.getByLabel('Refresh').inputValue(), 'off');
    t.equal((await services.sources.get(id)).refresh, 'off');
    t.equal(await services.ingestion.nextSync(bot.id, id), undefined);

    // Sync now, a minute later: the page follows the sync until it ends.
    now += 60_000_000;
    await row.getByRole('button', { name: 'Sync now' }).click();
    await row
      .locator('.last-sync')
      .filter({ hasText: await shown(now) })
      .waitFor({ timeout: 20_000 });
    await row.locator('.sync-counts').filter({ hasText: '0 added, 0 changed, 0 removed, 2 unchanged' }).waitFor();
    t.equal(await row.locator('.last-sync').textContent(), `Last sync: ${await shown(now)}`);
    t.equal(await row.locator('.next-sync').textContent(), 'Next sync: not scheduled');
    t.equal(await row.getByRole('button', { name: 'Sync now' }).isDisabled(), false);

    // The site is down at the next sync: the source keeps its pages and says why the sync failed.
    site.routes.set('/', { status: 503, body: 'down' });
    now += 60_000_000;
    await row.getByRole('button', { name: 'Sync now' }).click();
    const failure = row.locator('.sync-error');
    await failure.waitFor({ timeout: 20_000 });
    t.equal(await failure.textContent(), 'Last sync failed: no page could be read: HTTP 503');
    t.equal(await row.locator('.last-sync').textContent(), `Last sync: ${await shown(now)}`);
    t.equal(await row.locator('.sync-counts').count(), 0);
    t.equal(await row.getAttribute('data-status'), 'done');
    t.equal(await row.locator('.pages').textContent(), '2 pages');

    // Deleted meanwhile (another tab): the schedule change is refused the way the page shows errors.
    await services.intake.remove(id, gw.app.retrieval.index);
    await row.getByLabel('Refresh').selectOption('weekly');
    t.equal(await page.getByRole('alert').textContent(), 'Source not found.');
    await row.waitFor({ state: 'detached' });

    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
