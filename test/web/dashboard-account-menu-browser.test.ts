import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';

// Issue 20, point 6.1: the account menu closes on an item, a click or tap elsewhere, Escape and a
// route change; on a phone, once closed, it leaves the page title uncovered.
t.test('the account menu closes, and leaves the title uncovered on a phone', { skip: chromiumMissing }, async (t) => {
  const gw = await startGateway();
  const browser = await launchChromium();
  t.teardown(async () => {
    await browser.close();
    await gw.stop();
  });
  const owner = await createOwner(gw.app);
  const bot = await gw.app.services.chatbots.create(owner.id, { name: 'Corner Bakery' });
  const errors: string[] = [];

  await t.test('on a laptop: Escape, a click elsewhere, a route change, an item', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, gw.baseUrl, owner.email);
    const button = page.locator('button.account-button');
    const menu = page.getByRole('menu');

    await button.click();
    await menu.waitFor();
    t.equal(await button.getAttribute('aria-expanded'), 'true');
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    t.equal(await button.getAttribute('aria-expanded'), 'false');
    t.equal(await page.evaluate("document.activeElement?.classList.contains('account-button')"), true, 'focus back');

    await button.click();
    await menu.waitFor();
    await page.getByRole('heading', { name: 'Chatbots' }).click();
    await menu.waitFor({ state: 'detached' });

    await button.click();
    await menu.waitFor();
    await page.evaluate("location.hash = '#/usage'");
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    await menu.waitFor({ state: 'detached' });

    await button.click();
    await menu.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Signed out.' }).waitFor();
    t.equal(await menu.count(), 0);
    await page.close();
  });

  await t.test('on a phone: a tap elsewhere closes it and the title shows again', async (t) => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await phone.newPage();
    page.on('pageerror', (error) => errors.push(`phone: ${error.message}`));
    await signIn(page, gw.baseUrl, owner.email);
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/settings`);
    const title = page.locator('h1.chatbot-name');
    await title.waitFor();
    const menu = page.getByRole('menu');
    await page.locator('button.account-button').tap();
    await menu.waitFor();
    t.equal(await uncovered(page, 'h1.chatbot-name'), false, 'open, it covers the title');
    await page.getByLabel('System prompt').tap();
    await menu.waitFor({ state: 'detached' });
    t.equal(await uncovered(page, 'h1.chatbot-name'), true, 'closed, the title is uncovered');
    await phone.close();
  });

  t.same(errors, [], 'no page errors');
});

/**
 * Whether nothing is drawn over any part of the element's text: at a grid of points over its text's
 * box (not the heading's, which spans the page while its words may not reach where the menu hangs),
 * the topmost element is the element or inside it.
 */
function uncovered(page: Page, selector: string): Promise<boolean> {
  // Test files are type-checked without the DOM library: browser-side code is given as text.
  return page.evaluate(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    const range = document.createRange();
    range.selectNodeContents(element);
    const box = range.getBoundingClientRect();
    const shares = [0.1, 0.3, 0.5, 0.7, 0.9];
    return shares.every((across) =>
      shares.every((down) =>
        element.contains(document.elementFromPoint(box.left + box.width * across, box.top + box.height * down)),
      ),
    );
  })()`);
}

async function signIn(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
}
