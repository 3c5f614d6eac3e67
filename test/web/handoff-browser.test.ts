import type { Page } from 'playwright-core';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';

// Issue 22, item 1 and 2 where people see it: each hand-off state in the widget (one notice at a
// time, restored on a reload), the agent's name, initial and typing; and in the agent console,
// unread counts and a browser notification when a visitor asks for a person.

/** In the console's page: a Notification the test can read (the agent has allowed them). */
const RECORD_NOTIFICATIONS = `
  window.__notifications = [];
  window.Notification = class {
    static permission = 'granted';
    static requestPermission() { return Promise.resolve('granted'); }
    constructor(title, options) { window.__notifications.push({ title, body: options?.body, tag: options?.tag }); }
    addEventListener() {}
    close() {}
  };
`;

t.test(
  'the hand-off states a visitor sees, and what the agent console shows of them',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (req) => ({ text: `Happy to help with "${req.body.messages.at(-1).content}".` });
    const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
    const site = await startOwnerSite();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
      await openai.stop();
    });
    const { services } = gw.app;
    const owner = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(owner.user.id, { name: 'Shoe Shop' });
    const maria = await services.agents.create(owner.user.id, 'Maria', 'M');
    site.page =
      '<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">' +
      '<title>Shoes</title></head><body><h1>Shoe Shop</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;
    const errors: string[] = [];
    const newPage = async (who: string, width: number, height: number): Promise<Page> => {
      const page = await browser.newPage({ viewport: { width, height } });
      page.on('pageerror', (error) => errors.push(`${who}: ${error.message}`));
      return page;
    };
    const notice = (page: Page) => page.locator('div.sb-notice');
    const human = (page: Page) => page.getByRole('button', { name: 'Talk to a human' });

    // Nobody online: a visitor who asks for a person is offered the contact form, and only that.
    const early = await newPage('early visitor', 420, 760);
    await early.goto(site.origin);
    await early.locator('button.sb-bubble').click();
    await early.getByRole('textbox', { name: 'Message' }).fill('Do you have size 46?');
    await early.getByRole('button', { name: 'Send' }).click();
    await early.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
    await human(early).click();
    const form = early.locator('form.sb-lead');
    await form.waitFor();
    t.equal(
      await form.locator('p.sb-lead-intro').textContent(),
      "No one is available right now. Leave your contact details and we'll get back to you.",
    );
    t.equal(await notice(early).textContent(), '', 'the form is the one notice');
    t.equal(await human(early).count(), 0, '"Talk to a human" has done its job');
    t.equal(await early.getByRole('button', { name: 'Send', exact: true }).count(), 1, 'one Send button');
    t.equal(await form.getByRole('button', { name: 'Send my details' }).count(), 1);
    await readmeScreenshot(early, 'state-waiting-offline', 'widget');

    // Maria opens the agent console.
    const agent = await newPage('agent', 1280, 800);
    await agent.addInitScript(RECORD_NOTIFICATIONS);
    await agent.goto(`${gw.baseUrl}/agents`);
    await agent.locator('input[name="token"]').fill(maria.token);
    await agent.locator('form.sc-signin button[type="submit"]').click();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Maria' }).waitFor();
    t.equal(await agent.locator('button.sc-notify').isHidden(), true, 'notifications already allowed');

    const visitor = await newPage('visitor', 420, 760);
    await visitor.goto(site.origin);
    await visitor.locator('button.sb-bubble').click();

    await t.test('the AI answers: no notice, "Talk to a human" offered', async (t) => {
      await visitor.getByRole('textbox', { name: 'Message' }).fill('Can I exchange shoes?');
      await visitor.getByRole('button', { name: 'Send' }).click();
      await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
      t.equal(await notice(visitor).textContent(), '');
      t.equal(await human(visitor).isVisible(), true);
      await readmeScreenshot(visitor, 'state-ai', 'widget');
    });

    const session = (await visitor.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id))!;
    const item = agent.locator(`li.sc-item[data-session-id="${session}"]`);

    await t.test('the console counts what the agent has not read, and notifies the escalation', async (t) => {
      await item.waitFor();
      t.equal(await item.locator('span.sc-unread').textContent(), '1');
      await visitor.getByRole('textbox', { name: 'Message' }).fill('Size 42, black.');
      await visitor.getByRole('button', { name: 'Send' }).click();
      await item.locator('span.sc-unread').filter({ hasText: '2' }).waitFor();
      t.equal(await item.locator('span.sc-unread').getAttribute('aria-label'), '2 unread');

      await human(visitor).click();
      await notice(visitor)
        .filter({ hasText: "We've asked a person to join. You can keep writing meanwhile." })
        .waitFor();
      t.equal(await human(visitor).count(), 0);
      t.equal(await visitor.locator('form.sb-lead').isHidden(), true, 'Maria is online: no contact form');
      await readmeScreenshot(visitor, 'state-waiting', 'widget');
      await item.locator('span.sc-escalated').waitFor();
      const notified = await agent.evaluate('window.__notifications');
      t.same(notified, [
        {
          title: `Web visitor · ${session.slice('embed-'.length, 'embed-'.length + 4)} asks for a person`,
          body: 'Web widget · Shoe Shop',
          tag: `${bot.id}\n${session}`,
        },
      ]);
      await item.click();
      await agent.locator('div.sc-transcript div.sc-msg.sc-user').nth(1).waitFor();
      t.equal(await item.locator('span.sc-unread').count(), 0, 'read once opened');
      await readmeScreenshot(agent, 'escalated', 'console');
    });

    await t.test('Maria joins, types and writes: her name and initial, one notice', async (t) => {
      await agent.locator('button.sc-takeover').click();
      await agent.locator('div.sc-status').filter({ hasText: 'You hold this conversation.' }).waitFor();
      await visitor.locator('div.sb-event').filter({ hasText: 'Maria joined' }).waitFor();
      t.equal(await notice(visitor).textContent(), "You're talking with Maria.");
      await agent.locator('form.sc-reply textarea[name="content"]').pressSequentially('We have them in black, ');
      const typing = visitor.getByRole('status', { name: 'Maria is typing…' });
      await typing.waitFor();
      t.equal(await typing.locator('.sb-typing-who').textContent(), 'Maria is typing…');
      await readmeScreenshot(visitor, 'state-agent-typing', 'widget');
      await agent.locator('form.sc-reply textarea[name="content"]').pressSequentially('size 42.');
      await agent.locator('form.sc-reply button[type="submit"]').click();
      const message = visitor.locator('div.sb-message.sb-agent');
      await message.waitFor();
      t.same(
        [
          await message.locator('.sb-avatar').textContent(),
          await message.locator('.sb-author-name').textContent(),
          await message.locator('.sb-text').textContent(),
        ],
        ['M', 'Maria', 'We have them in black, size 42.'],
      );
      t.equal(await typing.isHidden(), true, 'the typing goes with her message');
      await readmeScreenshot(visitor, 'state-agent', 'widget');

      await visitor.reload();
      await visitor.locator('button.sb-bubble').click();
      await visitor.locator('div.sb-message.sb-agent').waitFor();
      t.equal(await notice(visitor).textContent(), "You're talking with Maria.", 'a reload keeps the state');
      t.equal(await human(visitor).count(), 0);
      t.equal(await visitor.locator('div.sb-message.sb-agent .sb-author-name').textContent(), 'Maria');
    });

    await t.test('Maria leaves: the assistant is back', async (t) => {
      await agent.locator('button.sc-release').click();
      await visitor.locator('div.sb-event').filter({ hasText: 'Maria left, the assistant is back' }).waitFor();
      t.equal(await notice(visitor).textContent(), '');
      t.equal(await human(visitor).isVisible(), true);
      await readmeScreenshot(visitor, 'state-back-to-ai', 'widget');
    });

    t.same(errors, [], 'no page errors');
  },
);
