import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { fixedTimeClock } from '../../src/clock.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { chromiumMissing, launchChromium, startOwnerSite } from '../support/browser.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';

/** Where the test leaves its screenshots (ignored by git). */
const SHOTS = path.resolve(import.meta.dirname, '../../.tap/screenshots');

/**
 * What the panel shows, top to bottom: each entry's class, then its parts' texts (the greeting's own
 * text; a message's author, text and `<time>` as `time TEXT DATETIME`; a reply's thumbs as `rate`
 * and the pressed one's label).
 */
function transcript(tab: Page): Promise<string[][]> {
  return tab
    .locator('div.sb-messages > :not([hidden])')
    .evaluateAll((nodes: any[]) =>
      nodes.map((node) => [
        node.className,
        ...(node.children.length === 0
          ? [node.textContent]
          : Array.from(node.children, (part: any) =>
              part.localName === 'time'
                ? `time ${part.textContent} ${part.getAttribute('datetime')}`
                : part.className === 'sb-rate'
                  ? [
                      'rate',
                      ...Array.from(part.querySelectorAll('[aria-pressed="true"]'), (b: any) => b.ariaLabel),
                    ].join(' ')
                  : part.textContent,
            )),
      ]),
    );
}

/** An AI reply shown whole (stored), not one still being written. */
const REPLY = 'div.sb-message.sb-assistant:not(.sb-streaming)';

/** The accessible name of what has the focus inside the widget (`null`: nothing there). */
function focusedInWidget(tab: Page): Promise<string | null> {
  return tab.evaluate(() => {
    const active = (globalThis as any).document.getElementById('switchboard-widget')?.shadowRoot?.activeElement;
    return active ? (active.getAttribute('aria-label') ?? active.textContent) : null;
  });
}

/** The embed snippet on the owner's page, as a phone would render it too. */
function embedPage(gatewayUrl: string, chatbotId: string): string {
  return (
    '<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>Acme</title></head><body><h1>Acme Corp</h1>' +
    `<script src="${gatewayUrl}/widget.js" data-chatbot="${chatbotId}" async></script></body></html>`
  );
}

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
    const reply = tab.locator('div.sb-message.sb-assistant:not(.sb-streaming)');
    await reply.waitFor();
    t.equal(await reply.locator('.sb-text').textContent(), 'We open at 9:00. (You asked: When do you open?)');
    t.equal(await tab.locator('div.sb-message.sb-user .sb-text').textContent(), 'When do you open?');
    await tab.locator('div.sb-typing').waitFor({ state: 'hidden' });
    mkdirSync(SHOTS, { recursive: true });
    await tab.screenshot({ path: path.join(SHOTS, 'widget-chat.png') });

    await tab.locator('button.sb-human').click();
    const form = tab.locator('form.sb-lead');
    await form.waitFor({ state: 'visible' });
    // Nobody is online: the form says so, and it is the one notice; "Talk to a human" has done its job.
    t.equal(
      await form.locator('p.sb-lead-intro').textContent(),
      "No one is available right now. Leave your contact details and we'll get back to you.",
    );
    t.equal(await tab.locator('div.sb-notice').textContent(), '');
    t.equal(await tab.locator('button.sb-human').isHidden(), true);
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
    await tab.locator('div.sb-message.sb-assistant:not(.sb-streaming)').waitFor();
    t.equal(await tab.locator('div.sb-message').count(), 2, 'history restored');
    t.equal(await tab.locator('div.sb-notice').textContent(), "Thanks! We'll be in touch.", 'the state too');
    t.equal(await tab.locator('form.sb-lead').isHidden(), true, 'no form asking again');
    t.equal(await tab.locator('button.sb-human').isHidden(), true);
    t.equal(await tab.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id), sessionId);
    t.same(errors, [], 'no page errors');
    t.comment(`screenshots in ${SHOTS}`);
  },
);

t.test(
  'the greeting and the time of every message: a new chatbot greets by default, live and restored messages show their times',
  { skip: chromiumMissing },
  async (t) => {
    // The gateway's clock stands still where the test puts it, so the times the widget shows are exact.
    const at = (iso: string) => Date.parse(iso) * 1000;
    let now = at('2026-11-21T13:07:00Z');
    const openai = await fakeOpenAi().start();
    openai.behaviour = () => ({ text: 'We open at 9:00.' });
    const gw = await startGateway(
      { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` },
      { clock: fixedTimeClock(() => now) },
    );
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
    // Never configured: the widget shows the settings' default greeting.
    const bot = await services.chatbots.create(owner.user.id, { name: 'Acme Help' });
    site.page = embedPage(gw.baseUrl, bot.id);

    // A visitor in Berlin (UTC+1 in November) whose browser writes times the British way.
    const tab = await browser.newPage({
      viewport: { width: 1280, height: 800 },
      locale: 'en-GB',
      timezoneId: 'Europe/Berlin',
    });
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    // The visitor's own line shows when it was written, by the browser's clock.
    await tab.clock.setFixedTime(new Date('2026-11-21T13:05:30Z'));
    await tab.goto(site.origin);
    await tab.locator('button.sb-bubble').click();
    await tab.locator('div.sb-panel').waitFor({ state: 'visible' });
    t.same(await transcript(tab), [['sb-welcome', 'Hi! How can I help you today?']], 'opens with the greeting');

    await tab.getByRole('textbox', { name: 'Message' }).fill('When do you open?');
    await tab.getByRole('button', { name: 'Send' }).click();
    await tab.locator(REPLY).waitFor();
    t.same(await transcript(tab), [
      ['sb-welcome', 'Hi! How can I help you today?'],
      ['sb-message sb-user', 'When do you open?', 'time 14:05 2026-11-21T13:05:30.000Z'],
      ['sb-message sb-assistant', 'We open at 9:00.', 'time 14:07 2026-11-21T13:07:00.000Z', 'rate'],
    ]);

    // An agent's reply, two minutes later by the gateway's clock.
    const sessionId = await tab.evaluate((id) => localStorage.getItem(`switchboard:${id}:session`), bot.id);
    await services.control.takeOver(bot.id, sessionId!, 'Alice');
    now = at('2026-11-21T13:09:00Z');
    await services.control.reply(bot.id, sessionId!, 'Alice', 'Alice here.');
    await tab.locator('div.sb-message.sb-agent').waitFor();
    t.same((await transcript(tab)).at(-1), [
      'sb-message sb-agent',
      'AAlice',
      'Alice here.',
      'time 14:09 2026-11-21T13:09:00.000Z',
    ]);
    mkdirSync(SHOTS, { recursive: true });
    await tab.screenshot({ path: path.join(SHOTS, 'widget-times.png') });

    // Restored history: every message at the time the gateway stored it.
    const restored = [
      ['sb-message sb-user', 'When do you open?', 'time 14:07 2026-11-21T13:07:00.000Z'],
      ['sb-message sb-assistant', 'We open at 9:00.', 'time 14:07 2026-11-21T13:07:00.000Z', 'rate'],
      ['sb-message sb-agent', 'AAlice', 'Alice here.', 'time 14:09 2026-11-21T13:09:00.000Z'],
    ];
    await tab.reload();
    await tab.locator('button.sb-bubble').click();
    await tab.locator('div.sb-message.sb-agent').waitFor();
    t.same(await transcript(tab), [['sb-welcome', 'Hi! How can I help you today?'], ...restored]);

    // An owner who wants no greeting clears it.
    await services.chatbots.configure(bot.id, { widget: { welcome_message: '' } });
    await tab.reload();
    await tab.locator('button.sb-bubble').click();
    await tab.locator('div.sb-message.sb-agent').waitFor();
    t.same(await transcript(tab), restored, 'no greeting');
    t.same(errors, [], 'no page errors');
  },
);

t.test(
  'the open panel closes by its close button and by Escape, on a phone and on a laptop; the focus goes back to the bubble',
  { skip: chromiumMissing },
  async (t) => {
    const gw = await startGateway();
    const site = await startOwnerSite();
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await site.close();
      await gw.stop();
    });
    const owner = await scaleAccount(gw.app);
    const bot = await gw.app.services.chatbots.create(owner.user.id, { name: 'Acme Help' });
    site.page = embedPage(gw.baseUrl, bot.id);
    const bubble = (tab: Page) => tab.locator('button.sb-bubble');
    const panel = (tab: Page) => tab.getByRole('dialog', { name: 'Acme Help' });

    // A phone: the open panel covers the screen and hides the bubble; its header's button closes it.
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(site.origin);
    await bubble(phone).tap();
    await panel(phone).waitFor({ state: 'visible' });
    t.same(await panel(phone).boundingBox(), { x: 0, y: 0, width: 390, height: 844 }, 'full screen');
    t.equal(await focusedInWidget(phone), 'Message', 'the message box has the focus');
    const close = phone.getByRole('button', { name: 'Close chat' });
    t.equal(await close.getAttribute('class'), 'sb-close', 'the one "Close chat" button is the header\'s');
    const box = (await close.boundingBox())!;
    t.same([box.width, box.height], [44, 44], 'a thumb-sized target');
    t.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= 390 && box.y + box.height <= 844, 'on the screen');
    mkdirSync(SHOTS, { recursive: true });
    await phone.screenshot({ path: path.join(SHOTS, 'widget-phone-open.png') });

    // Keyboard: back from the message box, past "Talk to a human", to the close button; Enter closes.
    const reached: Array<string | null> = [];
    for (let i = 0; i < 2; i++) {
      await phone.keyboard.press('Shift+Tab');
      reached.push(await focusedInWidget(phone));
    }
    t.same(reached, ['Talk to a human', 'Close chat']);
    await phone.keyboard.press('Enter');
    await panel(phone).waitFor({ state: 'hidden' });
    t.equal(await focusedInWidget(phone), 'Open chat', 'the focus is back on the bubble');
    t.equal(await bubble(phone).getAttribute('aria-expanded'), 'false');

    // Enter on the bubble opens the panel again; Escape closes it.
    await phone.keyboard.press('Enter');
    await panel(phone).waitFor({ state: 'visible' });
    t.equal(await focusedInWidget(phone), 'Message');
    await phone.keyboard.press('Escape');
    await panel(phone).waitFor({ state: 'hidden' });
    t.equal(await focusedInWidget(phone), 'Open chat');

    // A laptop: the close button, then Escape with the focus on the bubble (the panel stays open around it).
    const laptop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await laptop.goto(site.origin);
    await bubble(laptop).click();
    await panel(laptop).waitFor({ state: 'visible' });
    await panel(laptop).getByRole('button', { name: 'Close chat' }).click();
    await panel(laptop).waitFor({ state: 'hidden' });
    t.equal(await focusedInWidget(laptop), 'Open chat');
    await bubble(laptop).click();
    await panel(laptop).waitFor({ state: 'visible' });
    await bubble(laptop).focus();
    await laptop.keyboard.press('Escape');
    await panel(laptop).waitFor({ state: 'hidden' });
    t.equal(await focusedInWidget(laptop), 'Open chat');
  },
);
