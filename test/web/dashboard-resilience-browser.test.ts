import t from 'tap';
import type { Page, Route } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// The dashboard web app when answers come late, addresses are mangled and something between the
// browser and the gateway answers instead of it.
t.test(
  'the dashboard keeps its footing on late answers, bad links and a proxy error page',
  { skip: chromiumMissing },
  async (t) => {
    const gw = await startGateway();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
    });
    const owner = await createOwner(gw.app);
    const alpha = await gw.app.services.chatbots.create(owner.id, { name: 'Alpha Bot' });
    const beta = await gw.app.services.chatbots.create(owner.id, { name: 'Beta Bot' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, gw.baseUrl, owner.email);

    await t.test("a slow answer for the previous chatbot never shows on the next one's page", async (t) => {
      const alphaUrl = `${gw.baseUrl}/dashboard/api/chatbots/${alpha.id}`;
      let held: Route | undefined;
      await page.route(alphaUrl, (route) => {
        held = route;
      });
      await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${alpha.id}/settings`);
      await until(() => held !== undefined, "Alpha's read");
      await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${beta.id}/settings`);
      await page.getByRole('heading', { name: 'Beta Bot' }).waitFor();
      // Alpha's answer arrives now, after Beta's. The page marks when it has read that answer and
      // everything the reading set off has run: what followed in microtasks (the render), then the
      // effects after the next frame.
      await page.evaluate(`{
        const text = Response.prototype.text;
        const later = (next) => setTimeout(next, 0);
        Response.prototype.text = function () {
          const read = text.call(this);
          if (this.url === ${JSON.stringify(alphaUrl)}) {
            read.then(() => later(() => requestAnimationFrame(() => later(() => document.body.dataset.lateRead = ''))));
          }
          return read;
        };
      }`);
      await held!.fulfill({ response: await held!.fetch() });
      await page.locator('body[data-late-read]').waitFor({ state: 'attached' });
      t.equal(await page.locator('h1.chatbot-name').textContent(), 'Beta Bot Active');
      t.equal(await page.getByLabel('Name').inputValue(), 'Beta Bot');
      t.equal(
        await page.getByRole('link', { name: 'Sources' }).getAttribute('href'),
        `#/chatbots/${beta.id}/sources`,
        "the tabs lead to Beta's pages",
      );
      await page.unroute(alphaUrl);
    });

    await t.test('a malformed percent sign in the address shows not found instead of crashing', async (t) => {
      for (const mangled of ['%E0%A4%A', '%zz']) {
        await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${mangled}/settings`);
        const alert = page.getByRole('alert');
        await alert.waitFor();
        t.equal(await alert.textContent(), 'Chatbot not found.', mangled);
      }
      await page.goto(`${gw.baseUrl}/dashboard/#/chatbots`);
      await page.evaluate("location.hash = '#/chatbots/%E2%82/sources'");
      await page.getByRole('alert').filter({ hasText: 'Chatbot not found.' }).waitFor();
      t.same(errors, [], 'no page errors');
    });

    await t.test("a proxy's HTML error page becomes a clear error, not a JSON parse failure", async (t) => {
      const listUrl = `${gw.baseUrl}/dashboard/api/chatbots`;
      await page.route(listUrl, (route) =>
        route.fulfill({
          status: 502,
          contentType: 'text/html',
          body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
        }),
      );
      await page.goto(`${gw.baseUrl}/dashboard/#/chatbots`);
      const alert = page.getByRole('alert');
      await alert.waitFor();
      t.equal(
        await alert.textContent(),
        "The server answered HTTP 502 Bad Gateway, not the gateway's JSON. Try again in a moment.",
      );
      await page.unroute(listUrl);
      await page.reload();
      await page.getByRole('link', { name: 'Beta Bot' }).waitFor();
      t.same(errors, [], 'no page errors');
    });
  },
);

async function signIn(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
}
