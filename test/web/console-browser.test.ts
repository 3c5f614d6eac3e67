import { mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';

/** Where the test leaves its screenshots (ignored by git). */
const SHOTS = path.resolve(import.meta.dirname, '../../.tap/screenshots');

t.test(
  'the agent console takes over a widget conversation, replies and releases it',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}`, delayMs: 100 });
    const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
    const site = await startOwnerSite();
    const siteOrigin = site.origin;
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
      await openai.stop();
    });

    const { services } = gw.app;
    const owner = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(owner.user.id, { name: 'Acme Help' });
    const alice = await services.agents.create(owner.user.id, 'Alice');
    site.page =
      '<!doctype html><html><head><title>Acme</title></head><body><h1>Acme Corp</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;
    mkdirSync(SHOTS, { recursive: true });
    const errors: string[] = [];

    // The visitor asks a question on the owner's site and asks for a human.
    const visitor = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    visitor.on('pageerror', (error) => errors.push(`visitor: ${error.message}`));
    await visitor.goto(siteOrigin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.locator('textarea.sb-input').fill('Where is my order?');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant').waitFor();
    await visitor.locator('button.sb-human').click();
    await visitor.locator('form.sb-lead').waitFor({ state: 'visible' }); // no agent is online yet
    const sessionId = await visitor.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id);
    t.match(sessionId, /^embed-[0-9a-f-]{36}$/);

    // The agent signs in: a wrong token first, then Alice's.
    const agent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    agent.on('pageerror', (error) => errors.push(`agent: ${error.message}`));
    await agent.goto(`${gw.baseUrl}/agents`);
    await agent.locator('input[name="token"]').fill('ag_not-a-real-token');
    await agent.locator('form.sc-signin button[type="submit"]').click();
    const refused = agent.locator('div.sc-error');
    await refused.filter({ hasText: 'Invalid agent token.' }).waitFor();
    t.equal(await refused.textContent(), 'Invalid agent token.');
    await agent.locator('input[name="token"]').fill(alice.token);
    await agent.locator('form.sc-signin button[type="submit"]').click();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Alice' }).waitFor();

    // The escalated conversation is listed first and opens with its transcript.
    const item = agent.locator(`ul.sc-list li.sc-item[data-session-id="${sessionId}"]`);
    await item.locator('span.sc-escalated').waitFor();
    t.equal(await agent.locator('ul.sc-list li.sc-item').first().getAttribute('data-session-id'), sessionId);
    await item.click();
    const transcript = agent.locator('div.sc-conversation div.sc-transcript');
    await transcript.locator('div.sc-msg.sc-assistant').waitFor();
    t.same(await transcript.locator('div.sc-msg').allTextContents(), ['Where is my order?', 'AI: Where is my order?']);

    await agent.locator('button.sc-takeover').click();
    await agent.locator('div.sc-status').filter({ hasText: 'You hold this conversation.' }).waitFor();
    t.equal(await item.locator('span.sc-held').textContent(), 'Held by Alice');
    t.ok(await agent.locator('button.sc-release').isVisible(), 'Release is offered to the holder');

    // While Alice holds it, the visitor's message reaches her and the AI stays silent.
    const llmCalls = openai.requests.length;
    await visitor.locator('textarea.sb-input').fill('Hello? Anyone there?');
    await visitor.locator('button.sb-send').click();
    await transcript.locator('div.sc-msg.sc-user').nth(1).waitFor();
    t.equal(await transcript.locator('div.sc-msg.sc-user').nth(1).textContent(), 'Hello? Anyone there?');

    await agent.locator('form.sc-reply textarea[name="content"]').fill('Hi, I am Alice. Your order ships today.');
    await agent.locator('form.sc-reply button[type="submit"]').click();
    const fromAgent = visitor.locator('div.sb-message.sb-agent');
    await fromAgent.waitFor();
    t.equal(await fromAgent.locator('span.sb-text').textContent(), 'Hi, I am Alice. Your order ships today.');
    // No agent was online when the visitor asked, so the lead form was offered; a human has now joined.
    await visitor.locator('form.sb-lead').waitFor({ state: 'hidden' });
    await transcript.locator('div.sc-msg.sc-agent').waitFor();
    t.equal(await transcript.locator('div.sc-msg.sc-agent').count(), 1, 'the reply shows once in the console');
    t.equal(await agent.locator('form.sc-reply textarea[name="content"]').inputValue(), '', 'the draft is cleared');
    await agent.screenshot({ path: path.join(SHOTS, 'console-takeover.png') });
    await visitor.screenshot({ path: path.join(SHOTS, 'console-visitor-sees-agent.png') });
    t.equal(openai.requests.length, llmCalls, 'the AI was not asked while Alice held the conversation');
    t.equal(await visitor.locator('div.sb-message.sb-assistant').count(), 1, 'no AI reply reached the visitor');

    // Released, the AI answers the next message again.
    await agent.locator('button.sc-release').click();
    await agent.locator('div.sc-status').filter({ hasText: 'Released.' }).waitFor();
    t.equal(await item.locator('span.sc-held').count(), 0, 'nobody holds it');
    await visitor.locator('textarea.sb-input').fill('Thanks!');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant').nth(1).waitFor();
    t.equal(await visitor.locator('div.sb-message.sb-assistant').nth(1).textContent(), 'AI: Thanks!');
    await transcript.locator('div.sc-msg.sc-assistant').nth(1).waitFor();
    t.same(await transcript.locator('div.sc-msg').allTextContents(), [
      'Where is my order?',
      'AI: Where is my order?',
      'Hello? Anyone there?',
      'Hi, I am Alice. Your order ships today.',
      'Thanks!',
      'AI: Thanks!',
    ]);

    // A reload stays signed in; signing out returns to the form.
    await agent.reload();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Alice' }).waitFor();
    await agent.locator('button.sc-signout').click();
    await agent.locator('input[name="token"]').waitFor();
    t.equal(await agent.evaluate(() => sessionStorage.length), 0, 'the token is forgotten');
    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
