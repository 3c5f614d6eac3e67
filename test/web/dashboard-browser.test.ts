import t from 'tap';
import { standardWebhooksSecret } from '../../src/webhooks/standard-webhooks.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';
import { readmeScreenshot, SHOTS } from '../support/screenshots.ts';

t.test(
  'an owner signs in, builds a chatbot, uses an API key and a webhook, and revokes the key',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (req) => ({ text: `We ship within two business days. (${req.body.messages.at(-1).content})` });
    const receiver = await new WebhookReceiver().start();
    const gw = await startGateway({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      WEBHOOK_ALLOW_PRIVATE: '1',
    });
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await receiver.stop();
      await openai.stop();
    });
    const owner = await createOwner(gw.app);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const shot = (name: string) => readmeScreenshot(page, name);

    // Sign in: a wrong password first.
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not my password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await t.resolves(page.getByRole('alert').filter({ hasText: 'Email or password is incorrect.' }).waitFor());
    await page.getByLabel('Password').fill(PASSWORD);
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
    t.equal(
      await page.locator('p.empty').textContent(),
      'No chatbots yet. Create one, then add the content it should answer from.',
    );

    // Create a chatbot; the app moves on to its sources.
    await page.getByRole('button', { name: 'New chatbot' }).click();
    await page.getByLabel('Name').fill('Acme Help');
    await page.getByLabel('System prompt').fill('You answer questions about Acme orders, briefly.');
    await page.getByRole('button', { name: 'Create chatbot' }).click();
    await page.getByRole('heading', { name: 'Add text' }).waitFor();
    const bot = (await gw.app.services.chatbots.listForUser(owner.id))[0]!;
    t.match(bot, {
      name: 'Acme Help',
      system_prompt: 'You answer questions about Acme orders, briefly.',
      provider: 'chatgpt',
    });
    t.equal(new URL(page.url()).hash, `#/chatbots/${bot.id}/sources`);

    // Add a text source and watch it reach done.
    const addText = page.locator('form.add-text');
    await addText.getByLabel('Title').fill('Shipping policy');
    await addText
      .getByLabel('Text')
      .fill('Acme ships every order within two business days. Returns are free for 30 days.');
    await addText.getByRole('button', { name: 'Add text' }).click();
    const source = page.locator('li.source-item').filter({ hasText: 'Shipping policy' });
    await source.waitFor();
    await source.locator('.status-done').waitFor({ timeout: 20_000 });
    t.equal(await source.locator('.status').textContent(), 'done');
    t.equal(await source.locator('.pages').textContent(), '14 words · 78 characters', 'a text source has no pages');
    await page.getByLabel('Question').fill('How fast do you ship?');
    await page.getByRole('button', { name: 'Find passages' }).click();
    const passage = page.locator('ol.passages li').first();
    await passage.waitFor();
    t.equal(await passage.locator('strong').textContent(), 'Shipping policy', 'the text source is what it would use');
    t.equal(await passage.locator('.rank').textContent(), '#1');
    t.same(await passage.locator('.found-by').allTextContents(), ['Matched words', 'Similar meaning']);
    t.notMatch(await passage.textContent(), /score|0\.0/, 'no fusion score');
    await shot('sources');

    // A webhook to the owner's receiver: its secret is shown once; a test event lands in its log.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    // SPEC's four events are checked to begin with; the two beyond it are offered, marked, unchecked.
    const eventBoxes = page.locator('form.create-webhook input[name="events"]');
    t.same(await eventBoxes.evaluateAll((boxes: any[]) => boxes.map((box) => [box.value, box.checked])), [
      ['lead.captured', true],
      ['conversation.started', true],
      ['message.received', true],
      ['conversation.escalated', true],
      ['conversation.taken_over', false],
      ['conversation.released', false],
    ]);
    t.same(await page.locator('form.create-webhook label.check:has(.beyond-spec) code').allTextContents(), [
      'conversation.taken_over',
      'conversation.released',
    ]);
    t.equal(await page.locator('form.create-webhook .beyond-spec').first().textContent(), 'beyond the API spec');
    await page.getByLabel('Destination URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.locator('.shown-once code').textContent())!;
    t.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    receiver.secrets = [secret];
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('link', { name: receiver.url }).click();
    await page.locator('select[name="test-event"]').waitFor();
    t.same(await page.locator('select[name="test-event"] optgroup option').allTextContents(), [
      'conversation.taken_over',
      'conversation.released',
    ]);
    t.equal(await page.locator('select[name="test-event"] optgroup').getAttribute('label'), 'Beyond the API spec');
    await page.locator('select[name="test-event"]').selectOption('message.received');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const testDelivery = page.locator('li.delivery[data-status="delivered"]');
    await testDelivery.waitFor({ timeout: 20_000 });
    t.equal(await testDelivery.locator('code.event').textContent(), 'message.received');
    t.equal(await testDelivery.locator('td.status-code').textContent(), '200');
    t.equal(await testDelivery.locator('pre.response-body').textContent(), 'ok');
    t.equal(receiver.received.length, 1);
    t.equal(receiver.received[0]!.signatureValid, true, 'signed with the secret the page showed');
    t.match(receiver.received[0]!.body, { event: 'message.received', chatbot_id: bot.id, data: { test: true } });
    t.equal(receiver.received[0]!.standardSignatureValid, null, 'no Standard Webhooks headers by default');

    // Standard Webhooks, turned on from the webhook's page: the same secret in the form the official
    // libraries take appears beside the signing secret, and the next delivery verifies with it.
    const standard = page.locator('.standard-webhooks input[name="standard_webhooks"]');
    t.equal(await standard.isChecked(), false);
    await standard.click();
    await page.locator('.standard-secret').waitFor();
    t.equal(await standard.isChecked(), true);
    await page.getByRole('button', { name: 'Reveal' }).click();
    t.equal(await page.locator('.standard-secret').textContent(), standardWebhooksSecret(secret));
    await page.locator('select[name="test-event"]').selectOption('lead.captured');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.locator('li.delivery[data-status="delivered"]').nth(1).waitFor({ timeout: 20_000 });
    t.equal(receiver.received[1]!.body.event, 'lead.captured');
    t.equal(receiver.received[1]!.standardSignatureValid, true, 'verified by the official library');
    await shot('webhook-standard');

    // An API key, shown once, works against the public API.
    await page.getByRole('link', { name: 'Developer' }).click();
    await page.getByLabel('Name').fill('production');
    await page.getByRole('button', { name: 'Generate' }).click();
    const key = (await page.locator('.shown-once code').textContent())!;
    t.match(key, /^ic_[A-Za-z0-9_-]{49}$/);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('table.keys tbody tr').filter({ hasText: 'production' });
    t.equal(await row.locator('td.last-used').textContent(), 'Never');
    const listed = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key}` } });
    t.equal(listed.status, 200);
    t.same(
      ((await listed.json()) as Array<{ name: string }>).map((b) => b.name),
      ['Acme Help'],
    );
    const chat = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'How fast do you ship?', session_id: 'api-demo' }),
    });
    t.same(
      [chat.status, await chat.json()],
      [200, { response: 'We ship within two business days. (How fast do you ship?)' }],
    );
    await page.reload();
    await row.waitFor();
    t.not(await row.locator('td.last-used').textContent(), 'Never', 'last used is shown after the calls');

    // The chat's events reached the webhook's log.
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/webhooks`);
    await page.getByRole('link', { name: receiver.url }).click();
    await page.locator('li.delivery[data-status="delivered"]').nth(3).waitFor({ timeout: 20_000 });
    t.same(await page.locator('li.delivery code.event').allTextContents(), [
      'message.received',
      'conversation.started',
      'lead.captured',
      'message.received',
    ]);
    await shot('webhook-deliveries');

    // Revoking the key makes the public API answer 401 at once.
    await page.getByRole('link', { name: 'Developer' }).click();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke key' }).click();
    await row.locator('.badge.revoked').waitFor();
    t.equal(await row.locator('.badge').textContent(), 'Revoked');
    const refused = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key}` } });
    t.same([refused.status, await refused.json()], [401, { detail: 'Unauthorized' }]);
    await shot('api-keys');

    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
