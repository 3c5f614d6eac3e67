import t from 'tap';
import { fakeOpenAi, type RecordedRequest } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { startGateway } from '../support/gateway.ts';
import { SHOTS } from '../support/screenshots.ts';

/** The model answers from the first reference passage of its prompt, or says it does not know. */
function answerFromReferences(request: RecordedRequest) {
  const system = String((request.body as { messages: Array<{ content: string }> }).messages[0]!.content);
  const passage = /<reference [^>]*>\n([^]*?)\n<\/reference>/.exec(system)?.[1];
  return { text: passage ? `From our notes: ${passage}` : "I don't know." };
}

t.test(
  'a newcomer: empty Redis → first-run page → owner → chatbot → text source → widget on a page → answer → escalation → agent → release',
  { skip: chromiumMissing },
  async (t) => {
    const started = Date.now();
    const openai = await fakeOpenAi().start();
    openai.behaviour = answerFromReferences;
    const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
    const site = await startOwnerSite();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
      await openai.stop();
    });
    const errors: string[] = [];
    const newPage = async (who: string, width = 1280, height = 860) => {
      const page = await browser.newPage({ viewport: { width, height } });
      page.on('pageerror', (error) => errors.push(`${who}: ${error.message}`));
      return page;
    };
    const shot = (page: Awaited<ReturnType<typeof newPage>>, name: string) =>
      page.screenshot({ path: `${SHOTS}/newcomer-${name}.png` });

    // 1. The gateway starts on an empty Redis and prints a one-time setup link (main.ts makes this call).
    t.same(await gw.app.services.accounts.list(), [], 'an empty Redis');
    const token = await gw.app.services.ownerAuth.firstRunToken();
    if (!token) throw new Error('no setup token on an empty Redis');
    const owner = await newPage('owner');
    // Without the link, the dashboard asks for the token; with it, only for the account.
    await owner.goto(`${gw.baseUrl}/`);
    await owner.getByRole('heading', { name: 'Welcome to Switchboard' }).waitFor();
    t.equal(await owner.getByLabel('Setup token').count(), 1, 'the plain dashboard asks for the token');
    await owner.goto(`${gw.baseUrl}/dashboard/#/setup/${token}`);
    await owner.reload();
    await owner.getByRole('heading', { name: 'Welcome to Switchboard' }).waitFor();
    t.equal(await owner.getByLabel('Setup token').count(), 0, 'the link carries it');
    await owner.getByLabel('Email').fill('baker@cakeshop.example');
    await owner.getByLabel('Password').fill('flour and sugar and eggs');
    await owner.getByLabel('Repeat it').fill('flour and sugar and eggs');
    await shot(owner, '1-setup');
    await owner.getByRole('button', { name: 'Create the owner account' }).click();
    await owner.getByRole('heading', { name: 'Chatbots' }).waitFor();
    t.equal(new URL(owner.url()).hash, '#/chatbots', 'the token left the address bar');

    // 2. A chatbot and a text source, ready.
    await owner.getByRole('button', { name: 'New chatbot' }).click();
    await owner.getByLabel('Name').fill('Cake Shop Help');
    await owner.getByRole('button', { name: 'Create chatbot' }).click();
    await owner.getByRole('heading', { name: 'Add text' }).waitFor();
    const addText = owner.locator('form.add-text');
    await addText.getByLabel('Title').fill('Opening hours');
    await addText
      .getByLabel('Text')
      .fill('The Cake Shop is open Tuesday to Sunday, 9:00 to 18:00. Custom cakes need three days notice.');
    await addText.getByRole('button', { name: 'Add text' }).click();
    const source = owner.locator('li.source-item').filter({ hasText: 'Opening hours' });
    await source.locator('.status-done').waitFor({ timeout: 20_000 });
    await shot(owner, '2-source');
    const [bot] = await gw.app.services.chatbots.listForUser((await gw.app.services.accounts.list())[0]!.id);

    // 3. An agent for the owner's staff, its console token shown once.
    await owner.getByRole('link', { name: 'Agents' }).click();
    await owner.getByLabel('Agent name').fill('Maria');
    await owner.getByRole('button', { name: 'Add agent' }).click();
    const agentToken = (await owner.locator('.shown-once .secret-value code').textContent())!;
    t.match(agentToken, /^ag_/);

    // 4. The widget tag from the Widget page, pasted into the shop's page.
    await owner.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot!.id}/widget`);
    const snippet = (await owner.locator('.snippet code').textContent())!;
    t.equal(snippet, `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot!.id}" async></script>`);
    site.page = `<!doctype html><html><head><title>Cake Shop</title></head><body><h1>The Cake Shop</h1>${snippet}</body></html>`;

    // 5. Maria opens the agent console.
    const agent = await newPage('agent');
    await agent.goto(`${gw.baseUrl}/agents`);
    await agent.locator('input[name="token"]').fill(agentToken);
    await agent.locator('form.sc-signin button[type="submit"]').click();
    await agent.locator('span.sc-agent-name').filter({ hasText: 'Maria' }).waitFor();

    // 6. A visitor asks on the shop's page and is answered from the source.
    const visitor = await newPage('visitor', 420, 860);
    await visitor.goto(site.origin);
    await visitor.locator('button.sb-bubble').click();
    await visitor.locator('textarea.sb-input').fill('When are you open?');
    await visitor.locator('button.sb-send').click();
    const answer = visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming) span.sb-text').last();
    await answer.filter({ hasText: 'Tuesday to Sunday' }).waitFor();
    t.equal(
      await answer.textContent(),
      'From our notes: The Cake Shop is open Tuesday to Sunday, 9:00 to 18:00. Custom cakes need three days notice.',
    );
    await shot(visitor, '3-answer');

    // 7. The visitor asks for a human; Maria takes the conversation over and replies.
    await visitor.locator('button.sb-human').click();
    const sessionId = await visitor.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot!.id);
    const item = agent.locator(`ul.sc-list li.sc-item[data-session-id="${sessionId}"]`);
    await item.locator('span.sc-escalated').waitFor();
    t.equal(await item.locator('span.sc-bot').textContent(), 'Cake Shop Help');
    await item.click();
    await agent.locator('button.sc-takeover').click();
    await agent.locator('div.sc-status').filter({ hasText: 'You hold this conversation.' }).waitFor();
    await agent.locator('form.sc-reply textarea[name="content"]').fill('Hi, I am Maria. We can bake it for Saturday.');
    await agent.locator('form.sc-reply button[type="submit"]').click();
    const fromAgent = visitor.locator('div.sb-message.sb-agent span.sb-text');
    await fromAgent.waitFor();
    t.equal(await fromAgent.textContent(), 'Hi, I am Maria. We can bake it for Saturday.');
    await shot(agent, '4-console');
    await shot(visitor, '5-agent-reply');

    // 8. Released, the assistant answers again.
    await agent.locator('button.sc-release').click();
    await agent.locator('div.sc-status').filter({ hasText: 'Released.' }).waitFor();
    await visitor.locator('textarea.sb-input').fill('And custom cakes?');
    await visitor.locator('button.sb-send').click();
    await visitor.locator('div.sb-message.sb-assistant:not(.sb-streaming)').nth(1).waitFor();
    t.match(await answer.textContent(), /^From our notes: /);
    await shot(visitor, '6-released');

    // The owner reads the whole conversation in the dashboard.
    await owner.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot!.id}/conversations/${sessionId}`);
    const transcript = owner.locator('ol.transcript li.msg p');
    await transcript.nth(4).waitFor();
    t.same(await transcript.allTextContents(), [
      'When are you open?',
      'From our notes: The Cake Shop is open Tuesday to Sunday, 9:00 to 18:00. Custom cakes need three days notice.',
      'Hi, I am Maria. We can bake it for Saturday.',
      'And custom cakes?',
      'From our notes: The Cake Shop is open Tuesday to Sunday, 9:00 to 18:00. Custom cakes need three days notice.',
    ]);
    await shot(owner, '7-transcript');
    t.same(errors, [], 'no page errors');
    t.comment(
      `the newcomer's path took ${((Date.now() - started) / 1000).toFixed(1)} s end to end; screenshots in ${SHOTS}`,
    );
  },
);
