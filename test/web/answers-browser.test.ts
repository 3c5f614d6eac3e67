import type { Page } from 'playwright-core';
import t from 'tap';
import { fakeOpenAi, type RecordedRequest } from '../fakes/fake-llm-server.ts';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';
import { until } from '../support/until.ts';

// Issue 21 where people see it: the visitor watches a reply being written, then reads it with its
// numbered sources and rates it; the agent console shows the same reply as it is written and its
// sources; the owner finds the rating and the sources in the transcript and the count on the Usage
// page; a chatbot that answers only from its sources offers a person instead of guessing.

/** The model cites the shipping page first, then the returns text, by the ids the prompt gave them. */
function citingReply(request: RecordedRequest) {
  const system = String(request.body.messages[0].content);
  const ids = new Map([...system.matchAll(/<reference id="(\d+)" title="([^"]*)"/g)].map((m) => [m[2]!, m[1]!]));
  const text =
    `Orders leave our workshop within two working days [${ids.get('Shipping')}]. ` +
    `Unworn shoes can come back within 30 days [${ids.get('Returns')}].`;
  return { text, pieceIntervalMs: 120 };
}

const REPLY = 'div.sb-message.sb-assistant:not(.sb-streaming)';

t.test(
  'a streamed, cited answer: the visitor, the agent console and the owner',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = citingReply;
    const pages = await new FakeSite().start();
    pages.routes.set('/shipping', html('Shipping', '<main><p>Every order ships within two working days.</p></main>'));
    const gw = await startGateway({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      CRAWL_ALLOW_PRIVATE: '1',
    });
    const site = await startOwnerSite();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
      await pages.stop();
      await openai.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Cobbler Help' });
    const returns = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.', 'Returns');
    const shipping = await services.intake.addUrl(bot.id, `${pages.url}/shipping`);
    for (const source of [returns, shipping]) {
      await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
    }
    const alice = await services.agents.create(owner.id, 'Alice');
    site.page =
      '<!doctype html><html><head><title>Cobbler</title></head><body><h1>The Cobbler</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;
    const errors: string[] = [];
    const newPage = async (who: string, width = 1280, height = 800): Promise<Page> => {
      const page = await browser.newPage({ viewport: { width, height } });
      page.on('pageerror', (error) => errors.push(`${who}: ${error.message}`));
      return page;
    };

    // The agent console is open before the visitor writes.
    const agent = await newPage('agent');
    await agent.goto(`${gw.baseUrl}/agents`);
    await agent.locator('input[name="token"]').fill(alice.token);
    await agent.locator('form.sc-signin button[type="submit"]').click();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Alice' }).waitFor();

    const visitor = await newPage('visitor', 480, 860);
    await visitor.goto(site.origin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.getByRole('textbox', { name: 'Message' }).fill('How fast do you ship, and can I send shoes back?');
    await visitor.getByRole('button', { name: 'Send' }).click();

    await t.test('the visitor reads the reply as it is written, then with its numbered sources', async (t) => {
      const writing = visitor.locator('div.sb-message.sb-assistant.sb-streaming');
      await writing.filter({ hasText: 'Orders leave' }).waitFor();
      t.equal(await writing.getAttribute('aria-busy'), 'true');
      t.equal(await visitor.locator('div.sb-typing').isHidden(), true, 'the typing dots make way for the text');
      const text = (await writing.locator('.sb-text').textContent())!;
      t.ok(text.length < 40, `part of the reply: ${JSON.stringify(text)}`);

      const reply = visitor.locator(REPLY);
      await reply.waitFor();
      t.equal(await visitor.locator('div.sb-message.sb-assistant').count(), 1, 'the written reply became the reply');
      t.equal(
        await reply.locator('.sb-text').textContent(),
        'Orders leave our workshop within two working days1. Unworn shoes can come back within 30 days2.',
        'markers shown as small source numbers',
      );
      t.same(await reply.locator('sup.sb-cite').allTextContents(), ['1', '2']);
      const chips = reply.getByRole('list', { name: 'Sources' });
      t.same(await chips.locator('.sb-source').allTextContents(), ['1Shipping', '2Returns']);
      const link = chips.locator('a.sb-source');
      t.equal(await link.count(), 1, 'only the web page is a link');
      t.same(
        [await link.getAttribute('href'), await link.getAttribute('target'), await link.getAttribute('rel')],
        [`${pages.url}/shipping`, '_blank', 'noopener noreferrer'],
      );
      await readmeScreenshot(visitor, 'cited-answer', 'widget');
    });

    await t.test('the agent console showed it as it was written, and shows its sources', async (t) => {
      const item = agent.locator('ul.sc-list li.sc-item').first();
      await item.waitFor();
      await item.click();
      const transcript = agent.locator('div.sc-conversation div.sc-transcript');
      const reply = transcript.locator('div.sc-msg.sc-assistant:not(.sc-streaming)');
      await reply.waitFor();
      t.equal(
        await reply.textContent(),
        'Orders leave our workshop within two working days [1]. Unworn shoes can come back within 30 days [2].',
      );
      t.same(await transcript.locator('.sc-sources .sc-source').allTextContents(), ['[1] Shipping', '[2] Returns']);

      // A second question, streamed into the open conversation.
      openai.behaviour = () => ({
        text: 'We repair soles too, in about a week.',
        pieces: ['We repair', ' soles too,', ' in about', ' a week.'],
        pieceIntervalMs: 300,
      });
      await visitor.getByRole('textbox', { name: 'Message' }).fill('Do you repair soles?');
      await visitor.getByRole('button', { name: 'Send' }).click();
      const writing = transcript.locator('div.sc-msg.sc-assistant.sc-streaming');
      await writing.filter({ hasText: 'We repair' }).waitFor();
      t.not(await writing.textContent(), 'We repair soles too, in about a week.', 'seen before it was finished');
      await transcript.locator('div.sc-msg.sc-assistant:not(.sc-streaming)').nth(1).waitFor();
      t.equal(await transcript.locator('div.sc-msg.sc-streaming').count(), 0);
      t.equal(
        await transcript.locator('div.sc-msg.sc-assistant').nth(1).textContent(),
        'We repair soles too, in about a week.',
      );
    });

    await t.test('the visitor rates a reply; the rating survives a reload and can be changed', async (t) => {
      await visitor.locator(REPLY).nth(1).waitFor();
      const first = visitor.locator(REPLY).first();
      const helpful = first.getByRole('button', { name: 'Helpful', exact: true });
      const notHelpful = first.getByRole('button', { name: 'Not helpful' });
      t.same(
        [await helpful.getAttribute('aria-pressed'), await notHelpful.getAttribute('aria-pressed')],
        ['false', 'false'],
      );
      await helpful.click();
      const session = (await visitor.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id))!;
      const rated = async (rating: string | undefined) =>
        until(
          async () =>
            (await services.conversations.transcript(bot.id, session)).messages[1]!.feedback === rating || undefined,
          `rated ${rating}`,
        );
      await rated('up');
      t.equal(await helpful.getAttribute('aria-pressed'), 'true');
      await visitor.reload();
      await visitor.locator('button.sb-bubble').click();
      await visitor.locator(REPLY).nth(1).waitFor();
      t.equal(await helpful.getAttribute('aria-pressed'), 'true', 'restored after a reload');
      await notHelpful.click();
      await rated('down');
      t.same(
        [await helpful.getAttribute('aria-pressed'), await notHelpful.getAttribute('aria-pressed')],
        ['false', 'true'],
      );
    });

    await t.test('the owner sees the sources and the rating in the transcript, and the count on Usage', async (t) => {
      const dashboard = await newPage('owner');
      await dashboard.goto(`${gw.baseUrl}/dashboard`);
      await dashboard.getByLabel('Email').fill(owner.email);
      await dashboard.getByLabel('Password').fill(PASSWORD);
      await dashboard.getByRole('button', { name: 'Sign in' }).click();
      await dashboard.getByRole('heading', { name: 'Chatbots' }).waitFor();
      await dashboard.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/conversations`);
      await dashboard.locator('li.conversation-item a.session').first().click();
      const reply = dashboard.locator('ol.transcript li.msg.assistant').first();
      await reply.waitFor();
      t.same(await reply.getByRole('list', { name: 'Sources' }).locator('li').allTextContents(), [
        '[1] Shipping',
        '[2] Returns',
      ]);
      t.equal(await reply.locator('li a').getAttribute('href'), `${pages.url}/shipping`);
      t.equal(await reply.locator('p.rating').textContent(), 'Rated not helpful by the visitor');
      await dashboard.goto(`${gw.baseUrl}/dashboard/#/usage`);
      const row = dashboard.locator('table.ratings tbody tr');
      await row.first().waitFor();
      t.same(await row.first().locator('td').allTextContents(), ['Cobbler Help', '0', '1']);
    });

    await t.test('answering only from sources, a question they do not cover is offered a person', async (t) => {
      await services.chatbots.configure(bot.id, { answers: { sources_only: true } });
      const calls = openai.requests.length;
      await visitor.getByRole('textbox', { name: 'Message' }).fill('What is the airspeed of a swallow?');
      await visitor.getByRole('button', { name: 'Send' }).click();
      const offer = visitor.getByRole('button', { name: 'Ask a person instead' });
      await offer.waitFor();
      t.equal(
        await visitor.locator(REPLY).last().locator('.sb-text').textContent(),
        (await services.chatbots.get(bot.id)).fallback_message,
      );
      t.equal(openai.requests.length, calls, 'the AI was not asked');
      await offer.click();
      // Alice's console is open: she is asked to join.
      await visitor
        .locator('div.sb-notice')
        .filter({ hasText: "We've asked a person to join. You can keep writing meanwhile." })
        .waitFor();
      t.equal(await offer.count(), 0, 'the offer is gone once taken');
    });

    t.same(errors, [], 'no page errors');
  },
);
