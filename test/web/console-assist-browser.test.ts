import t from 'tap';
import { fakeOpenAi, type RecordedRequest } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { PASSWORD, createOwner } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';

// Issue 22, item 4, in Chromium: the agent inserts a canned reply with `/`, asks for a suggestion,
// edits it and sends it; the visitor's widget gets exactly what was sent and nothing before. And the
// owner manages the canned replies on the dashboard.
const DRAFT = 'Your order left our Leeds warehouse this morning.';
const isSuggestion = (request: RecordedRequest) =>
  String(request.body.messages[0]?.content).includes('You draft a reply for a human support agent');

t.test(
  'the agent inserts a canned reply, takes a suggestion, edits it and sends it',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (request) =>
      isSuggestion(request)
        ? { text: DRAFT, delayMs: 300 }
        : { text: `AI: ${request.body.messages.at(-1).content}`, delayMs: 50 };
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
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Acme Help' });
    const alice = await services.agents.create(owner.id, 'Alice');
    const canned = {
      refund: 'Refunds reach your card within 5 working days.',
      hello: "Hello! I'm looking into this for you.",
      shipping: 'We ship within 2 days.',
    };
    for (const [shortcut, text] of Object.entries(canned)) {
      await services.cannedReplies.create(owner.id, { shortcut, text });
    }
    site.page =
      '<!doctype html><html><head><title>Acme</title></head><body><h1>Acme Corp</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;
    const errors: string[] = [];

    const visitor = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    visitor.on('pageerror', (error) => errors.push(`visitor: ${error.message}`));
    await visitor.goto(site.origin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.locator('textarea.sb-input').fill('Where is my order?');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
    const sessionId = await visitor.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id);

    const agent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    agent.on('pageerror', (error) => errors.push(`agent: ${error.message}`));
    await agent.goto(`${gw.baseUrl}/agents`);
    await agent.locator('input[name="token"]').fill(alice.token);
    await agent.locator('form.sc-signin button[type="submit"]').click();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Alice' }).waitFor();
    await agent.locator(`li.sc-item[data-session-id="${sessionId}"]`).click();
    const box = agent.locator('form.sc-reply textarea[name="content"]');
    const suggest = agent.locator('form.sc-reply button.sc-suggest');
    t.ok(await suggest.isDisabled(), 'no suggestion before taking over');
    await agent.locator('button.sc-takeover').click();
    await agent.locator('div.sc-status').filter({ hasText: 'You hold this conversation.' }).waitFor();

    // `/` lists every canned reply; `/in` finds shortcuts containing it first, then texts.
    const picker = agent.locator('ul.sc-canned');
    const shortcuts = () =>
      picker.locator('li.sc-canned-item').evaluateAll((items) => items.map((li) => li.getAttribute('data-shortcut')));
    await box.pressSequentially('/');
    await picker.waitFor();
    t.same(await shortcuts(), ['hello', 'refund', 'shipping']);
    await box.pressSequentially('in');
    await picker.locator('li.sc-canned-item').first().filter({ hasText: '/shipping' }).waitFor();
    t.same(await shortcuts(), ['shipping', 'hello', 'refund']);
    t.same(await picker.locator('li.sc-canned-item[aria-selected="true"]').getAttribute('data-shortcut'), 'shipping');
    await readmeScreenshot(agent, 'canned-replies', 'console');
    await box.press('ArrowDown');
    await box.press('ArrowDown');
    t.equal(await picker.locator('li.sc-active').getAttribute('data-shortcut'), 'refund');
    await box.press('Enter');
    await picker.waitFor({ state: 'hidden' });
    t.equal(await box.inputValue(), canned.refund, 'Enter put the text in the box, and sent nothing');
    await box.fill('/nothing-like-this');
    await picker
      .locator('li.sc-canned-empty')
      .filter({ hasText: 'No canned reply matches /nothing-like-this.' })
      .waitFor();
    await box.press('Enter');
    t.equal(await box.inputValue(), '/nothing-like-this', 'Enter with no match sends nothing either');
    await box.press('Escape');
    await picker.waitFor({ state: 'hidden' });
    // A click works too.
    await box.fill('');
    await box.pressSequentially('/hel');
    await picker.locator('li.sc-canned-item[data-shortcut="hello"]').click();
    t.equal(await box.inputValue(), canned.hello);

    // A reply the owner adds while the console is open is there at once (pushed, then read again).
    await services.cannedReplies.create(owner.id, { shortcut: 'thanks', text: 'Thanks for waiting!' });
    await box.fill('');
    await box.pressSequentially('/than');
    await picker.locator('li.sc-canned-item[data-shortcut="thanks"]').waitFor();
    await box.press('Escape');

    // A suggestion beside a typed draft is offered, not forced in.
    await box.fill(canned.hello);
    await suggest.click();
    await agent.locator('form.sc-reply button.sc-suggest').filter({ hasText: 'Suggesting…' }).waitFor();
    const offer = agent.locator('div.sc-suggestion-offer');
    await offer.waitFor();
    t.equal(await offer.locator('blockquote.sc-suggestion-text').textContent(), DRAFT);
    t.equal(await box.inputValue(), canned.hello, 'the typed draft stays until the agent chooses');
    await readmeScreenshot(agent, 'suggestion-offer', 'console');
    await offer.locator('button.sc-suggestion-use').click();
    await offer.waitFor({ state: 'hidden' });
    t.equal(await box.inputValue(), DRAFT);
    // Into an empty draft it goes at once.
    await box.fill('');
    await suggest.click();
    await agent
      .locator('div.sc-status')
      .filter({ hasText: 'Suggestion in the reply box: edit it, then send.' })
      .waitFor();
    t.equal(await box.inputValue(), DRAFT);
    t.equal(openai.requests.filter(isSuggestion).length, 2);

    // Nothing reached the visitor while the agent worked on the draft.
    t.equal(await visitor.locator('div.sb-message.sb-agent').count(), 0, 'nothing before the agent sends');
    // The agent edits the draft and sends it.
    await box.press('End');
    await box.pressSequentially(' It arrives tomorrow.');
    await box.press('Enter');
    const sent = `${DRAFT} It arrives tomorrow.`;
    const fromAgent = visitor.locator('div.sb-message.sb-agent');
    await fromAgent.waitFor();
    t.same(await fromAgent.locator('span.sb-text').allTextContents(), [sent], 'exactly what was sent, once');
    t.same(
      (await services.conversations.transcript(bot.id, sessionId!)).messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Where is my order?'],
        ['assistant', 'AI: Where is my order?'],
        ['agent', sent],
      ],
    );
    await agent.locator('div.sc-transcript div.sc-msg.sc-agent').waitFor();
    t.equal(await box.inputValue(), '', 'the draft is cleared once sent');
    t.same(errors, [], 'no page errors');
  },
);

t.test('the owner adds, edits and deletes canned replies on the dashboard', { skip: chromiumMissing }, async (t) => {
  const gw = await startGateway();
  const browser = await launchChromium();
  t.teardown(async () => {
    await browser.close();
    await gw.stop();
  });
  const owner = await createOwner(gw.app);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${gw.baseUrl}/dashboard`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
  await page.getByRole('link', { name: 'Canned replies' }).click();
  await page.getByRole('heading', { name: 'Canned replies' }).waitFor();
  t.equal(new URL(page.url()).hash, '#/canned-replies');
  await page.getByText('No canned replies yet.').waitFor();

  const create = page.locator('form.create-canned');
  const add = async (shortcut: string, text: string) => {
    await create.locator('input[name="shortcut"]').fill(shortcut);
    await create.locator('textarea[name="text"]').fill(text);
    await create.getByRole('button', { name: 'Add canned reply' }).click();
  };
  await add('Refund', 'Refunds take 5 days.');
  await page
    .getByRole('alert')
    .filter({ hasText: 'shortcut must be 1 to 32 characters of a-z, 0-9, - and _.' })
    .waitFor();
  await add('refund', 'Refunds take 5 days.');
  const item = (shortcut: string) => page.locator(`li.canned-item[data-shortcut="${shortcut}"]`);
  await item('refund').waitFor();
  t.equal(await create.locator('input[name="shortcut"]').inputValue(), '', 'the form is emptied once saved');
  await add('/refund', 'Again.');
  await page.getByRole('alert').filter({ hasText: 'A canned reply /refund already exists.' }).waitFor();
  await add('hours', 'We are open 9 to 5.');
  await item('hours').waitFor();
  t.same(await page.locator('li.canned-item code.canned-shortcut').allTextContents(), ['/hours', '/refund']);
  t.equal(await page.locator('p.canned-count').textContent(), '2 of 200');

  await item('refund').getByRole('button', { name: 'Edit' }).click();
  const edit = item('refund').locator('form.edit-canned');
  await edit.locator('input[name="shortcut"]').fill('refund-eu');
  await edit.locator('textarea[name="text"]').fill('Refunds take 3 days in the EU.');
  await edit.getByRole('button', { name: 'Save' }).click();
  await item('refund-eu').locator('p.canned-text').filter({ hasText: 'Refunds take 3 days in the EU.' }).waitFor();
  await readmeScreenshot(page, 'canned-replies');

  await item('hours').getByRole('button', { name: 'Delete' }).click();
  await item('hours').getByRole('button', { name: 'Delete canned reply' }).click();
  await item('hours').waitFor({ state: 'detached' });
  t.same(
    (await gw.app.services.cannedReplies.list(owner.id)).map((reply) => [reply.shortcut, reply.text]),
    [['refund-eu', 'Refunds take 3 days in the EU.']],
  );
  t.same(errors, [], 'no page errors');
});
