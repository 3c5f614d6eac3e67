import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { SHOTS } from '../support/screenshots.ts';
import { apiFetch } from '../support/openapi-contract.ts';

t.test(
  "misconfiguration shows: a provider without a key is flagged at creation, 'Test' says what the provider answers, a failed turn says why",
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = () => ({ text: 'OK' });
    // An OpenAI key, no Gemini key.
    const gw = await startGateway({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      LLM_MAX_RETRIES: '0',
    });
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await openai.stop();
    });
    const owner = await createOwner(gw.app);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();

    // Choosing Gemini warns before anything is created; ChatGPT does not.
    await page.getByRole('button', { name: 'New chatbot' }).click();
    const provider = page.getByLabel('Provider');
    t.same(await provider.locator('option').allTextContents(), [
      'ChatGPT (OpenAI)',
      'Gemini (Google): no GEMINI_API_KEY on this server',
      'Ollama (self-hosted)',
    ]);
    const warning = page.locator('form.chatbot-form .notice.info');
    t.equal(await warning.count(), 0, 'ChatGPT has its key');
    await provider.selectOption('gemini');
    await warning.waitFor();
    t.equal(
      await warning.textContent(),
      'This server has no GEMINI_API_KEY: visitors will get the fallback message until the operator sets it, or choose another provider.',
    );
    await page.screenshot({ path: `${SHOTS}/dashboard-provider-warning.png` });
    await provider.selectOption('chatgpt');
    await warning.waitFor({ state: 'detached' });
    await page.getByLabel('Name').fill('Cake Shop Help');
    await page.getByRole('button', { name: 'Create chatbot' }).click();
    await page.getByRole('heading', { name: 'Add text' }).waitFor();

    // The settings page lists the providers; Test makes one tiny call and shows the answer or the reason.
    await page.getByRole('link', { name: 'Settings' }).click();
    const card = page.locator('.card.providers');
    const row = (name: string) => card.locator(`li[data-provider="${name}"]`);
    await row('gemini').waitFor();
    t.same(await card.locator('li .badge').allTextContents(), ['No GEMINI_API_KEY', 'Configured', 'Configured']);
    await row('chatgpt').getByRole('button', { name: 'Test' }).click();
    const okResult = row('chatgpt').locator('.provider-result');
    await okResult.waitFor();
    t.match(await okResult.textContent(), /^gpt-4o-mini answered in \d+ ms: “OK”$/);
    t.equal(openai.requests.length, 1, 'one call');
    await row('gemini').getByRole('button', { name: 'Test' }).click();
    const failed = row('gemini').locator('.provider-result');
    await failed.waitFor();
    t.equal(await failed.textContent(), 'gemini-2.5-flash failed: gemini: GEMINI_API_KEY is not set');
    // A second test at once is refused by the server, and the reason is shown in the row.
    await row('chatgpt').getByRole('button', { name: 'Test' }).click();
    await okResult.filter({ hasText: 'Wait a few seconds' }).waitFor();
    t.equal(await okResult.textContent(), 'Wait a few seconds before testing this provider again.');
    t.equal(openai.requests.length, 1, 'no second call');
    await page.screenshot({ path: `${SHOTS}/dashboard-provider-test.png` });

    // A chatbot left on Gemini: its failed turn says why in the owner's transcript.
    const gem = await gw.app.services.chatbots.create(owner.id, { name: 'Gem', provider: 'gemini' });
    const key = await gw.app.services.apiKeys.create(owner.id, 'k');
    const chat = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${gem.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Do you bake on Sundays?', session_id: 'api-sunday' }),
    });
    t.same([chat.status, await chat.json()], [500, { detail: 'LLM provider error.' }], "the API keeps SPEC's answer");
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${gem.id}/conversations/api-sunday`);
    const asked = page.locator('ol.transcript li.msg.user');
    await asked.locator('.failure').waitFor();
    t.same(await asked.locator('p').allTextContents(), [
      'Do you bake on Sundays?',
      'Not answered: LLM provider error: gemini: GEMINI_API_KEY is not set',
    ]);
    await page.screenshot({ path: `${SHOTS}/dashboard-failed-turn.png` });
    t.same(errors, []);
  },
);
