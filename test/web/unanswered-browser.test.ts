import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';
import { SHOP_FAQ } from '../support/shop-faq.ts';
import { until } from '../support/until.ts';
import { apiFetch } from '../support/openapi-contract.ts';

t.test(
  'the owner answers an unanswered question from the inbox; a paraphrase is then answered from it',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    const gw = await startGateway({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      CONVERSATION_RATE_LIMIT: '1000',
    });
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await openai.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Bike shop', provider: 'chatgpt' });
    for (const [title, text] of SHOP_FAQ) await services.intake.addText(bot.id, text, title);
    await until(
      async () => (await services.sources.listForChatbot(bot.id)).every((source) => source.status === 'done'),
      'the shop’s sources to be ingested',
      30_000,
    );
    const key = await services.apiKeys.create(owner.id, 'site');
    const chat = async (message: string, sessionId: string) => {
      const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ message, session_id: sessionId }),
      });
      return ((await res.json()) as { response: string }).response;
    };
    // A visitor's question the model cannot answer: the fallback message.
    openai.behaviour = () => ({ text: '' });
    t.equal(await chat('Can I bring my dog into the shop?', 'api-first-visitor'), bot.fallback_message);
    await until(async () => (await services.unanswered.list(bot.id, 'open')).length === 1, 'the inbox');
    // Earlier questions, as turns, ratings and escalations recorded them.
    const minutesAgo = (minutes: number) => (Date.now() - minutes * 60_000) * 1000;
    const record = services.unansweredRecorder.record.bind(services.unansweredRecorder);
    await record(bot.id, 'embed-a', 'Do you ship bikes to Canada?', minutesAgo(50), 'low_relevance');
    await record(bot.id, 'embed-b', 'do you ship bikes to canada', minutesAgo(30), 'low_relevance');
    const instalments = minutesAgo(20);
    const question = 'Can I pay for a bike in instalments over two years?';
    await record(bot.id, 'embed-c', question, instalments, 'thumbs_down');
    await record(bot.id, 'embed-c', question, instalments, 'escalated');

    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
    await page.getByRole('link', { name: 'Bike shop' }).click();
    await page.getByRole('link', { name: 'Unanswered' }).click();

    // The inbox: the question, how often, why, and its conversation.
    const item = page.locator('li.unanswered-item').filter({ hasText: 'Can I bring my dog into the shop?' });
    await item.waitFor();
    t.equal(await item.locator('.badge.count').textContent(), 'Asked 1 time');
    t.same(await item.locator('.badge.reason').allTextContents(), ['Fallback message']);
    t.equal(
      await item.getByRole('link', { name: 'Latest conversation' }).getAttribute('href'),
      `#/chatbots/${bot.id}/conversations/api-first-visitor`,
    );
    const other = page.locator('li.unanswered-item').filter({ hasText: question });
    t.equal(await other.locator('.badge.count').textContent(), 'Asked 1 time', 'one question, two reasons');
    t.same(await other.locator('.badge.reason').allTextContents(), ['Thumbs down', 'Escalated']);
    await readmeScreenshot(page, 'unanswered');

    // Improve the answer: saved as a source, and the question leaves the open list.
    await item.getByRole('button', { name: 'Improve answer' }).click();
    await item
      .getByLabel('Right answer')
      .fill('Yes: dogs on a lead are welcome, and there is a water bowl by the door.');
    await item.getByRole('button', { name: 'Save answer' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Saved “Can I bring my dog into the shop?” as a source' })
      .waitFor();
    await item.waitFor({ state: 'detached' });
    t.equal(await page.locator('li.unanswered-item').count(), 2, 'the other questions stay open');
    await page.getByRole('link', { name: 'Resolved' }).click();
    await page.locator('li.unanswered-item').filter({ hasText: 'Answered' }).waitFor();
    t.equal(await page.locator('li.unanswered-item .question').textContent(), 'Can I bring my dog into the shop?');

    // The source is in the list like any other, and the gateway ingests it.
    await page.getByRole('link', { name: 'Sources', exact: true }).click();
    await page
      .locator('li.source-item[data-status="done"]')
      .filter({ hasText: 'Can I bring my dog into the shop?' })
      .waitFor({ timeout: 20_000 });

    // A paraphrase: the prompt the model gets holds the owner's answer.
    openai.behaviour = (req) => {
      const system: string = req.body.messages[0].content;
      return { text: system.includes('dogs on a lead are welcome') ? 'Dogs on a lead are welcome.' : 'No idea.' };
    };
    t.equal(await chat('Are dogs allowed inside your store?', 'api-second-visitor'), 'Dogs on a lead are welcome.');

    // Any AI reply of a transcript can be improved too.
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/conversations/api-second-visitor`);
    await page.getByRole('button', { name: 'Improve this answer' }).click();
    await page.getByLabel('Source title').fill('Dogs in the shop');
    await page.getByLabel('Right answer').fill('Dogs on a lead are welcome; please keep them off the test-ride bikes.');
    await page.getByRole('button', { name: 'Save answer' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “Dogs in the shop” as a source' }).waitFor();
    const titles = (await services.sources.listForChatbot(bot.id)).map((source) => source.title);
    t.ok(titles.includes('Dogs in the shop') && titles.includes('Can I bring my dog into the shop?'));
    t.same(errors, [], 'no script errors');
  },
);
