import t from 'tap';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { fullConversation } from '../support/full-conversation.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';

// Where owners see retention and erasure: the Data retention card on the chatbot's settings, and the
// Delete conversation button of a transcript (asked twice), which takes the visitor's lead with it.
t.test(
  'data retention set on the dashboard; a conversation and its lead deleted from its transcript',
  { skip: chromiumMissing },
  async (t) => {
    const gw = await startGateway();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Bakery' });
    await fullConversation(services, bot, 'embed-ada');
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();

    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/settings`);
    const card = page.locator('form.retention');
    await card.waitFor();
    await card.getByText('Conversations are kept for ever; leads are kept for ever.').waitFor();
    // The browser refuses 0 days itself (the field's minimum), and nothing is saved.
    await card.getByLabel('Delete conversations with no message for (days)').fill('0');
    await card.getByRole('button', { name: 'Save retention' }).click();
    t.equal(
      await card
        .getByLabel('Delete conversations with no message for (days)')
        .evaluate((input) => (input as unknown as { validity: { rangeUnderflow: boolean } }).validity.rangeUnderflow),
      true,
    );
    t.same((await services.chatbots.get(bot.id)).settings.retention, { conversations_days: null, leads_days: null });
    await card.getByLabel('Delete conversations with no message for (days)').fill('90');
    await card.getByLabel('Delete leads left more than (days) ago').fill('365');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await card
      .getByRole('status')
      .filter({
        hasText:
          'Saved. Conversations are deleted 90 days after their last message; leads 365 days after they were left.',
      })
      .waitFor();
    t.same((await services.chatbots.get(bot.id)).settings.retention, { conversations_days: 90, leads_days: 365 });
    t.ok(await services.retention.dueAt(bot.id), 'scheduled for the sweeps');
    await card.scrollIntoViewIfNeeded();
    await readmeScreenshot(page, 'retention');
    await card.getByLabel('Delete leads left more than (days) ago').fill('');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await card.getByRole('status').filter({ hasText: 'leads are kept for ever.' }).waitFor();
    t.same((await services.chatbots.get(bot.id)).settings.retention, { conversations_days: 90, leads_days: null });

    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/conversations/embed-ada`);
    await page.locator('.transcript-view').waitFor();
    await page.getByRole('button', { name: 'Delete conversation' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    t.equal(await services.conversations.exists(bot.id, 'embed-ada'), true, 'cancelled: kept');
    await page.getByRole('button', { name: 'Delete conversation' }).click();
    await page.getByRole('button', { name: 'Delete it and its lead for good' }).click();
    await page.waitForURL(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/conversations`);
    t.equal(await services.conversations.exists(bot.id, 'embed-ada'), false);
    t.same(await services.leads.list(bot.id), []);
    t.same(errors, [], 'no page errors');
  },
);
