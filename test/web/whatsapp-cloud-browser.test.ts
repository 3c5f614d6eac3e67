import t from 'tap';
import { FakeGraphWhatsApp, postWebhook, statusWebhook, textWebhook } from '../fakes/fake-graph-whatsapp.ts';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';
import { until } from '../support/until.ts';

// Issue 23 where the owner sees it: the WhatsApp panel offers both transports, says plainly that a
// linked device risks a ban, connects the Cloud API with the number's id, token and app secret, and
// shows the webhook URL and verify token to give Meta.
t.test(
  'the WhatsApp panel: choose the transport, connect the Cloud API, read the webhook URL and verify token',
  { skip: chromiumMissing },
  async (t) => {
    const graph = await new FakeGraphWhatsApp().start();
    const gw = await startGateway(
      { GRAPH_API_BASE_URL: graph.url, CRAWL_ALLOW_PRIVATE: '1', SECRET_KEY: '4b'.repeat(32) },
      { whatsappSockets: new FakeWhatsApp().factory },
    );
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await graph.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Bakery' });
    const number = graph.addNumber('+1 555-0100', 'Acme Bakery');
    const APP_SECRET = '9f'.repeat(16);
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${gw.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/channels`);
    const panel = page.locator('div.whatsapp-panel');
    await panel.getByRole('heading', { name: 'WhatsApp' }).waitFor();

    // Both transports are offered; the Cloud API first, the linked device with its ban risk said plainly.
    t.equal(await panel.getByLabel('Cloud API (official)').isChecked(), true);
    t.equal(await panel.getByLabel('Linked device (unofficial: Meta may ban the number)').isChecked(), false);
    t.equal(await panel.locator('.ban-risk').count(), 0);
    await panel.getByLabel(/^Linked device/).check();
    t.equal(
      await panel.locator('.ban-risk').textContent(),
      "Ban risk: a linked device automates WhatsApp Web, which WhatsApp's terms do not allow. Meta may ban the " +
        'number, without warning and for good. Use it only with a number you can afford to lose; a business should ' +
        'use the Cloud API.',
    );
    await panel.getByRole('button', { name: 'Link WhatsApp' }).waitFor();
    await readmeScreenshot(page, 'whatsapp-linked-device');
    await panel.getByLabel('Cloud API (official)').check();

    // A refused token is told as Meta's error means it; nothing is stored.
    await panel.getByLabel('Phone number ID').fill(number.id);
    await panel.getByLabel('Access token').fill(`EAAG${'0'.repeat(40)}`);
    await panel.getByLabel('App secret').fill(APP_SECRET);
    await panel.getByRole('button', { name: 'Connect the Cloud API' }).click();
    t.equal(
      await panel.getByRole('alert').textContent(),
      'The Cloud API refused: The WhatsApp access token has expired or was revoked: connect again with a new system-user token.',
    );
    t.equal(await services.whatsappCloud.find(bot.id), undefined);

    await panel.getByLabel('Access token').fill(number.token);
    await panel.getByLabel('Notice for messages that are not text (optional)').fill('Please write to us in words.');
    await panel.getByRole('button', { name: 'Connect the Cloud API' }).click();
    await panel.locator('p.connected').waitFor();
    t.equal(
      await panel.locator('p.connected').textContent(),
      'Connected to +1 555-0100 (Acme Bakery) through the Cloud API.',
    );
    const stored = (await services.whatsappCloud.find(bot.id))!;
    t.match(stored, { phoneNumberId: number.id, token: number.token, appSecret: APP_SECRET });
    const webhookUrl = await panel.locator('.webhook-url code').textContent();
    const verifyToken = await panel.locator('.verify-token code').textContent();
    t.equal(webhookUrl, `${gw.baseUrl}/channels/whatsapp/${bot.id}`);
    t.equal(verifyToken, stored.verifyToken);
    t.equal(
      await panel.locator('.notice-text').textContent(),
      'Messages that are not text are answered: Please write to us in words.',
    );
    t.notOk((await panel.textContent())?.includes(number.token), 'the token is not shown');
    t.notOk((await panel.textContent())?.includes(APP_SECRET), 'the app secret is not shown');
    // What the owner copies is what Meta's check needs.
    const query = new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.verify_token': verifyToken!, 'hub.challenge': '31337' }); // prettier-ignore
    const check = await fetch(`${webhookUrl!}?${query.toString()}`);
    t.same([check.status, await check.text()], [200, '31337']);
    await readmeScreenshot(page, 'whatsapp-cloud');

    // A visitor writes; the reply (the fallback: no provider here) is sent, then reported undeliverable.
    const from = '4915100000321';
    const webhook = (payload: unknown) => postWebhook(gw.baseUrl, bot.id, payload, APP_SECRET);
    t.equal((await webhook(textWebhook(number, from, 'wamid.BROWSER1', 'Do you deliver cakes?'))).status, 200);
    const sent = await until(() => graph.of('send', number.id)[0], 'the reply sent');
    const undeliverable = { code: 131026, title: 'Message undeliverable', details: 'Unable to deliver message.' };
    await webhook(statusWebhook(number, sent.wamid!, from, 'failed', undeliverable));
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/conversations/wa_${from}@s.whatsapp.net`);
    const delivery = page.locator('.msg.assistant .delivery.failed');
    await delivery.waitFor();
    t.match(
      await delivery.textContent(),
      /^Not delivered on WhatsApp \(.+\): WhatsApp could not deliver the message: the number may not be on WhatsApp, /,
    );
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/channels`);
    await panel.locator('p.connected').waitFor();

    // A change keeps the secrets when they are left empty.
    await panel.getByRole('button', { name: 'Change settings' }).click();
    t.equal(await panel.getByLabel('Phone number ID').inputValue(), number.id);
    t.equal(await panel.getByLabel('Access token').getAttribute('placeholder'), 'leave empty to keep the one stored');
    await panel.getByLabel('Notice for messages that are not text (optional)').fill('Text only, sorry!');
    await panel.getByRole('button', { name: 'Save Cloud API settings' }).click();
    await panel.locator('.notice-text').filter({ hasText: 'Text only, sorry!' }).waitFor();
    t.match(await services.whatsappCloud.find(bot.id), { token: number.token, verifyToken: stored.verifyToken });

    await panel.getByRole('button', { name: 'Disconnect' }).click();
    await panel.getByRole('button', { name: 'Disconnect the Cloud API' }).click();
    await panel.getByRole('button', { name: 'Connect the Cloud API' }).waitFor();
    t.equal(await services.whatsappCloud.find(bot.id), undefined);
    t.same(errors, []);
  },
);
