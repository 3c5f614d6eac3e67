import t from 'tap';
import { fixedTimeClock } from '../../src/clock.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';

// Issue 22, item 3 where people see it: the owner sets office hours on the dashboard; a visitor who
// asks for a person on a Saturday is offered the contact form and told, in their own time, when the
// office opens.
t.test(
  'office hours: set on the dashboard, seen by a visitor on a closed day',
  { skip: chromiumMissing },
  async (t) => {
    const now = Date.parse('2026-11-28T09:00:00Z'); // Saturday, 10:00 in Berlin
    const gw = await startGateway({}, { clock: fixedTimeClock(() => now * 1000) });
    const site = await startOwnerSite();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Bakery' });
    site.page =
      '<!doctype html><html><head><title>Bakery</title></head><body><h1>Bakery</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;
    const errors: string[] = [];

    const dashboard = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    dashboard.on('pageerror', (error) => errors.push(`owner: ${error.message}`));
    await dashboard.goto(`${gw.baseUrl}/dashboard`);
    await dashboard.getByLabel('Email').fill(owner.email);
    await dashboard.getByLabel('Password').fill(PASSWORD);
    await dashboard.getByRole('button', { name: 'Sign in' }).click();
    await dashboard.getByRole('heading', { name: 'Chatbots' }).waitFor();
    await dashboard.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/settings`);
    const card = dashboard.locator('form.office-hours');
    await card.waitFor();
    await card.getByLabel('Answer visitors who ask for a person only in office hours').check();
    await card.getByLabel('Time zone').fill('Europe/Berlin');
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) {
      await card.getByLabel(day).fill('09:00-12:30, 13:30-17:00');
    }
    await card.getByLabel(/^Holidays/).fill('2026-11-30');
    await card.getByRole('button', { name: 'Save office hours' }).click();
    await card.getByRole('status').filter({ hasText: 'Office hours saved.' }).waitFor();
    t.same((await services.chatbots.get(bot.id)).settings.hours, {
      enabled: true,
      time_zone: 'Europe/Berlin',
      weekly: {
        mon: [
          ['09:00', '12:30'],
          ['13:30', '17:00'],
        ],
        tue: [
          ['09:00', '12:30'],
          ['13:30', '17:00'],
        ],
        wed: [
          ['09:00', '12:30'],
          ['13:30', '17:00'],
        ],
        thu: [
          ['09:00', '12:30'],
          ['13:30', '17:00'],
        ],
        fri: [
          ['09:00', '12:30'],
          ['13:30', '17:00'],
        ],
        sat: [],
        sun: [],
      },
      holidays: ['2026-11-30'],
      contact_after_minutes: 0,
    });
    await card.scrollIntoViewIfNeeded();
    await readmeScreenshot(dashboard, 'office-hours');
    // A mistake is named by the gateway, and nothing typed is lost.
    await card.getByLabel('Saturday').fill('10-14');
    await card.getByRole('button', { name: 'Save office hours' }).click();
    await card.getByRole('alert').filter({ hasText: 'hours.weekly.sat[0][0]: must be a time like 09:00' }).waitFor();
    t.equal(await card.getByLabel('Saturday').inputValue(), '10-14');

    // A visitor in London (an hour behind Berlin) asks for a person on Saturday.
    const visitor = await browser.newPage({
      viewport: { width: 420, height: 760 },
      locale: 'en-GB',
      timezoneId: 'Europe/London',
    });
    visitor.on('pageerror', (error) => errors.push(`visitor: ${error.message}`));
    await visitor.goto(site.origin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.getByRole('button', { name: 'Talk to a human' }).click();
    const form = visitor.locator('form.sb-lead');
    await form.waitFor();
    t.equal(
      await form.locator('p.sb-lead-intro').textContent(),
      "We're closed right now. Leave your contact details and we'll get back to you when we open (Tuesday 08:00).",
      'Monday is a holiday; Tuesday 09:00 in Berlin is 08:00 in London',
    );
    t.equal(await visitor.locator('div.sb-notice').textContent(), '');
    await readmeScreenshot(visitor, 'state-closed', 'widget');
    t.same(errors, [], 'no page errors');
  },
);
