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

    // Another visitor, earlier, asked for a human too and is offered the lead form (left for later).
    const grace = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    grace.on('pageerror', (error) => errors.push(`grace: ${error.message}`));
    await grace.goto(siteOrigin);
    await grace.locator('button.sb-bubble').click();
    await grace.locator('textarea.sb-input').fill('Do you ship abroad?');
    await grace.locator('button.sb-send').click();
    await grace.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
    await grace.locator('button.sb-human').click();
    await grace.locator('form.sb-lead').waitFor({ state: 'visible' });
    const graceSession = await grace.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id);
    t.match(graceSession, /^embed-[0-9a-f-]{36}$/);

    // The visitor asks a question on the owner's site and asks for a human.
    const visitor = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    visitor.on('pageerror', (error) => errors.push(`visitor: ${error.message}`));
    await visitor.goto(siteOrigin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.locator('textarea.sb-input').fill('Where is my order?');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
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

    // The escalated conversations are listed, the latest first, each with who, where and when.
    const item = agent.locator(`ul.sc-list li.sc-item[data-session-id="${sessionId}"]`);
    await item.locator('span.sc-escalated').waitFor();
    t.equal(await agent.locator('ul.sc-list li.sc-item').first().getAttribute('data-session-id'), sessionId);
    const localTime = (timestamp: string) =>
      agent.evaluate((at) => new Date(Date.parse(at)).toLocaleString(), timestamp);
    const lastAt = async (session: string) =>
      (await services.conversations.transcript(bot.id, session)).messages.at(-1)!.created_at;
    const itemText = async (entry: typeof item) => ({
      visitor: await entry.locator('span.sc-visitor').textContent(),
      channel: await entry.locator('span.sc-source').textContent(),
      chatbot: await entry.locator('span.sc-bot').textContent(),
      time: await entry.locator('time.sc-time').textContent(),
      datetime: await entry.locator('time.sc-time').getAttribute('datetime'),
    });
    const itemAt = await lastAt(sessionId!);
    t.same(await itemText(item), {
      visitor: `Web visitor · ${sessionId!.slice('embed-'.length, 'embed-'.length + 4)}`,
      channel: 'Web widget',
      chatbot: 'Acme Help',
      time: await localTime(itemAt),
      datetime: itemAt,
    });

    // Grace leaves her name while her conversation is open in the console: list and header show it.
    const graceItem = agent.locator(`ul.sc-list li.sc-item[data-session-id="${graceSession}"]`);
    const graceShort = `Web visitor · ${graceSession!.slice('embed-'.length, 'embed-'.length + 4)}`;
    t.equal(await graceItem.locator('span.sc-visitor').textContent(), graceShort);
    await graceItem.click();
    const header = agent.locator('div.sc-conversation header.sc-conversation-header');
    await header.locator('h2.sc-conversation-visitor').filter({ hasText: graceShort }).waitFor();
    await grace.locator('form.sb-lead input[name="name"]').fill('Grace Hopper');
    await grace.locator('form.sb-lead input[name="email"]').fill('grace@example.com');
    await grace.locator('form.sb-lead button.sb-lead-submit').click();
    await graceItem.locator('span.sc-visitor').filter({ hasText: 'Grace Hopper' }).waitFor();
    await header.locator('h2.sc-conversation-visitor').filter({ hasText: 'Grace Hopper' }).waitFor();
    const graceAt = await lastAt(graceSession!);
    t.same(await itemText(graceItem), {
      visitor: 'Grace Hopper',
      channel: 'Web widget',
      chatbot: 'Acme Help',
      time: await localTime(graceAt),
      datetime: graceAt,
    });
    t.same(await header.locator('div.sc-conversation-details > *').allTextContents(), [
      'Grace Hopper',
      'grace@example.com',
      'Web widget',
      'Acme Help',
      `Last activity ${await localTime(graceAt)}`,
      graceSession,
      `Escalated ${await localTime((await services.conversations.get(bot.id, graceSession!)).escalated_at!)}`,
    ]);
    await agent.screenshot({ path: path.join(SHOTS, 'console-lead-named.png') });

    // The other conversation opens with its transcript.
    await item.click();
    await header.locator('h2.sc-conversation-visitor').filter({ hasText: 'Web visitor' }).waitFor();
    const transcript = agent.locator('div.sc-conversation div.sc-transcript');
    await transcript.locator('div.sc-msg.sc-assistant:not(.sc-streaming)').waitFor();
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
    t.equal(
      await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').count(),
      1,
      'no AI reply reached the visitor',
    );

    // Released, the AI answers the next message again.
    await agent.locator('button.sc-release').click();
    await agent.locator('div.sc-status').filter({ hasText: 'Released.' }).waitFor();
    t.equal(await item.locator('span.sc-held').count(), 0, 'nobody holds it');
    await visitor.locator('textarea.sb-input').fill('Thanks!');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').nth(1).waitFor();
    t.equal(
      await visitor
        .locator('div.sb-message.sb-assistant:not(.sb-streaming)')
        .nth(1)
        .locator('span.sb-text')
        .textContent(),
      'AI: Thanks!',
    );
    await transcript.locator('div.sc-msg.sc-assistant:not(.sc-streaming)').nth(1).waitFor();
    t.same(await transcript.locator('div.sc-msg').allTextContents(), [
      'Where is my order?',
      'AI: Where is my order?',
      'Hello? Anyone there?',
      'Hi, I am Alice. Your order ships today.',
      'Thanks!',
      'AI: Thanks!',
    ]);

    // A reload stays signed in, and the list it gets names Grace; signing out returns to the form.
    await agent.reload();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Alice' }).waitFor();
    await graceItem.locator('span.sc-visitor').filter({ hasText: 'Grace Hopper' }).waitFor();
    t.equal(await graceItem.locator('span.sc-visitor').textContent(), 'Grace Hopper');
    await agent.locator('button.sc-signout').click();
    await agent.locator('input[name="token"]').waitFor();
    t.equal(await agent.evaluate(() => sessionStorage.length), 0, 'the token is forgotten');
    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
