import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';

/** Where the test leaves its screenshots (ignored by git). */
const SHOTS = path.resolve(import.meta.dirname, '../../.tap/screenshots');

t.test(
  'a page embeds the widget: chat, "Talk to a human", lead form, webhooks',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (req) => ({
      text: `We open at 9:00. (You asked: ${req.body.messages.at(-1).content})`,
      delayMs: 300,
    });
    const receiver = await new WebhookReceiver().start();
    const gw = await startGateway({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_POLL_MS: '50',
    });
    // The owner's site, on another origin than the gateway.
    const site = await startOwnerSite();
    const siteOrigin = site.origin;
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
      await receiver.stop();
      await openai.stop();
    });

    const { services } = gw.app;
    const owner = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(owner.user.id, { name: 'Acme Help' });
    await services.chatbots.configure(bot.id, {
      allowed_origins: [siteOrigin],
      lead_fields: [{ name: 'company', label: 'Company', required: true }],
      ctas: [{ id: 'pricing', label: 'See pricing', action: 'link', url: 'https://acme.example/pricing' }],
      widget: { title: 'Acme Support', color: '#0f766e', welcome_message: 'Hi! How can we help?' },
    });
    const hook = await services.webhooks.create(bot.id, receiver.url, ['conversation.escalated', 'lead.captured']);
    receiver.secrets = [hook.secret];
    site.page =
      '<!doctype html><html><head><title>Acme</title><style>div, button { color: red !important; font-size: 40px; }</style></head>' +
      '<body><h1>Acme Corp</h1>' +
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script></body></html>`;

    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(siteOrigin);
    await tab.locator('button.sb-bubble').click();
    await tab.locator('div.sb-panel').waitFor({ state: 'visible' });
    t.equal(await tab.locator('div.sb-title').textContent(), 'Acme Support');
    t.equal(
      await tab.locator('h1').evaluate((h) => (globalThis as any).getComputedStyle(h).color),
      'rgb(0, 0, 0)',
      'page untouched',
    );
    t.not(
      await tab.locator('div.sb-title').evaluate((el) => (globalThis as any).getComputedStyle(el).color),
      'rgb(255, 0, 0)',
      "the page's CSS does not reach into the widget",
    );
    t.equal(await tab.locator('div.sb-ctas button[data-cta-id="pricing"]').textContent(), 'See pricing');

    await tab.locator('textarea.sb-input').fill('When do you open?');
    await tab.locator('button.sb-send').click();
    await tab.locator('div.sb-typing').waitFor({ state: 'visible' });
    const reply = tab.locator('div.sb-message.sb-assistant');
    await reply.waitFor();
    t.equal(await reply.textContent(), 'We open at 9:00. (You asked: When do you open?)');
    t.equal(await tab.locator('div.sb-message.sb-user').textContent(), 'When do you open?');
    await tab.locator('div.sb-typing').waitFor({ state: 'hidden' });
    mkdirSync(SHOTS, { recursive: true });
    await tab.screenshot({ path: path.join(SHOTS, 'widget-chat.png') });

    await tab.locator('button.sb-human').click();
    const form = tab.locator('form.sb-lead');
    await form.waitFor({ state: 'visible' });
    t.match(await tab.locator('div.sb-notice').textContent(), /asked a human to join/);
    await form.locator('input[name="name"]').fill('Grace Hopper');
    await form.locator('input[name="email"]').fill('grace@navy.example');
    await form.locator('input[name="custom:company"]').fill('US Navy');
    await tab.screenshot({ path: path.join(SHOTS, 'widget-lead-form.png') });
    await form.locator('button[type="submit"]').click();
    await form.waitFor({ state: 'hidden' });
    t.match(await tab.locator('div.sb-notice').textContent(), /Thanks! We'll be in touch\./);
    await tab.screenshot({ path: path.join(SHOTS, 'widget-lead-saved.png') });
    t.ok(statSync(path.join(SHOTS, 'widget-lead-saved.png')).size > 5000, 'a screenshot was taken');

    const sessionId = await tab.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id);
    t.match(sessionId, /^embed-[0-9a-f-]{36}$/);
    const deadline = Date.now() + 10_000;
    while (receiver.received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const received = receiver.received.map((r) => r.body);
    t.ok(
      receiver.received.every((r) => r.signatureValid),
      'signed',
    );
    t.same(
      received.map((body) => body.event),
      ['conversation.escalated', 'lead.captured'],
    );
    t.match(received[0].data, { session_id: sessionId, channel: 'web', message_count: 2 });
    t.match(received[1].data, {
      name: 'Grace Hopper',
      email: 'grace@navy.example',
      phone: '',
      custom_data: { company: 'US Navy' },
    });

    // A reload resumes the same session, with the transcript.
    await tab.reload();
    await tab.locator('button.sb-bubble').click();
    await tab.locator('div.sb-message.sb-assistant').waitFor();
    t.equal(await tab.locator('div.sb-message').count(), 2, 'history restored');
    t.equal(await tab.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id), sessionId);
    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
