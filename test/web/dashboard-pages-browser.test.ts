import { readFileSync } from 'node:fs';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { FakeTelegram } from '../fakes/fake-telegram.ts';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { startGateway } from '../support/gateway.ts';
import { readmeScreenshot } from '../support/screenshots.ts';
import { apiFetch } from '../support/openapi-contract.ts';

t.test(
  'the invited owner sets a password, then edits the widget, channels, leads, conversations and usage',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = () => ({ text: 'Our store opens at 9.' });
    const telegram = await new FakeTelegram().start();
    const whatsapp = new FakeWhatsApp();
    const gw = await startGateway(
      {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        TELEGRAM_API_ROOT: telegram.url,
      },
      { whatsappSockets: whatsapp.factory },
    );
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await telegram.stop();
      await openai.stop();
    });
    const { services } = gw.app;
    const account = await services.accounts.create('maria@shop.example', 'scale');
    const bot = await services.chatbots.create(account.id, { name: 'Shop Assistant' });
    await services.chatbots.configure(bot.id, {
      lead_fields: [{ name: 'company', label: 'Company', required: false }],
    });
    const chatbot = await services.chatbots.get(bot.id);
    await services.leadCapture.capture(chatbot, 'embed-visitor-7', {
      name: 'Ann Lee',
      email: 'ann@example.com',
      phone: '',
      custom_data: { company: 'Lee & Co' },
    });
    const key = await services.apiKeys.create(account.id, 'server');
    for (const message of ['When do you open?', 'And on Sunday?']) {
      const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ message, session_id: 'api-storefront' }),
      });
      t.equal(res.status, 200);
    }
    await services.control.escalate(bot.id, 'embed-visitor-7', { source: 'embed' });
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => errors.push(error.message));

    // The invitation link: the password is typed twice, then the owner is in.
    const invite = await services.ownerAuth.invite(account.id, gw.baseUrl);
    await page.goto(invite.url);
    await page.getByLabel('New password').fill('sunny window 42');
    await page.getByLabel('Repeat it').fill('sunny window 43');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords differ.' }).waitFor();
    await page.getByLabel('Repeat it').fill('sunny window 42');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
    t.equal(new URL(page.url()).hash, '#/chatbots', 'the token left the address bar');
    await readmeScreenshot(page, 'chatbots');

    // Behaviour: edit the fallback message and pause the chatbot.
    await page.getByRole('link', { name: 'Shop Assistant' }).click();
    await page.getByLabel('Fallback message').fill('Please email help@shop.example.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('button', { name: 'Pause chatbot' }).click();
    await page.locator('h1 .badge.paused').waitFor();
    t.match(await services.chatbots.get(bot.id), {
      fallback_message: 'Please email help@shop.example.',
      is_active: false,
    });
    await page.getByRole('button', { name: 'Resume chatbot' }).click();
    await page.locator('h1 .badge.ok').waitFor();

    // Retrieval: query rewrite is off until the owner turns it on; it is saved at once.
    const rewrite = page.getByLabel('Rewrite each question before searching the sources');
    await page.locator('input[name="query_rewrite"]:enabled').waitFor();
    t.equal(await rewrite.isChecked(), false);
    await rewrite.check();
    await page.getByRole('status').filter({ hasText: 'Query rewrite is on.' }).waitFor();
    t.same((await services.chatbots.get(bot.id)).settings.retrieval, { query_rewrite: true });
    await rewrite.uncheck();
    await page.getByRole('status').filter({ hasText: 'Query rewrite is off.' }).waitFor();
    t.same((await services.chatbots.get(bot.id)).settings.retrieval, { query_rewrite: false });

    // Sources: a file dropped on the zone is uploaded and ingested; a wrong type is refused by name.
    await page.getByRole('link', { name: 'Sources' }).click();
    // Test files are type-checked without the DOM library: browser-side code is given as text.
    const dropped = await page.evaluateHandle(`(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(['# Opening hours\\n\\nMonday to Saturday, 9 to 18.'], 'hours.md', { type: 'text/markdown' }));
    transfer.items.add(new File(['MZ'], 'setup.exe', { type: 'application/octet-stream' }));
    return transfer;
  })()`);
    await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
    await page
      .getByRole('alert')
      .filter({ hasText: 'setup.exe: file must be a PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT file.' })
      .waitFor();
    await page
      .locator('li.source-item[data-status="done"]')
      .filter({ hasText: 'hours.md' })
      .waitFor({ timeout: 20_000 });

    // Widget: the preview is the real widget showing the draft; saving stores it, the button's id made
    // from its label.
    await page.getByRole('link', { name: 'Widget' }).click();
    t.equal(
      await page.locator('.snippet code').textContent(),
      `<script src="${gw.baseUrl}/widget.js" data-chatbot="${bot.id}" async></script>`,
    );
    await page.getByLabel('Title', { exact: true }).fill('Ask the shop');
    await page.locator('input[name="color"]').fill('#0f766e');
    await page.getByLabel('Welcome message').fill('Hi! Ask me about opening hours.');
    await page.getByRole('button', { name: 'Add button' }).click();
    await page.getByLabel('Button label').fill('Talk to a person');
    const preview = page.frameLocator('iframe.preview-frame');
    await preview.getByRole('dialog', { name: 'Ask the shop' }).waitFor();
    await preview.getByRole('button', { name: 'Talk to a person' }).waitFor();
    await preview.getByText('Hi! Ask me about opening hours.').waitFor();
    t.equal(
      await preview
        .getByRole('button', { name: 'Send', exact: true })
        .evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor),
      'rgb(15, 118, 110)',
    );
    t.equal(await preview.locator('input[name="custom:company"]').count(), 1, 'the lead form has the custom field');
    await page.getByRole('button', { name: 'Save widget settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Widget settings saved.' }).waitFor();
    t.match((await services.chatbots.get(bot.id)).settings, {
      widget: { title: 'Ask the shop', color: '#0f766e', welcome_message: 'Hi! Ask me about opening hours.' },
      ctas: [{ id: 'talk-to-a-person', label: 'Talk to a person', action: 'escalate' }],
    });
    await page.evaluate('scrollTo(0, 0)');
    await readmeScreenshot(page, 'widget');

    // Channels: Telegram in polling mode.
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.getByLabel('Bot token').fill(telegram.addBot('shop_help_bot'));
    await page.getByLabel('Mode').selectOption('polling');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.locator('div.telegram-panel p.connected').waitFor();
    t.equal(
      await page.locator('div.telegram-panel p.connected').textContent(),
      'Connected to @shop_help_bot in polling mode.',
    );

    // Channels: WhatsApp linked by the QR code the gateway's socket shows.
    const panel = page.locator('div.whatsapp-panel');
    await panel.getByLabel(/^Linked device/).check();
    await panel.getByRole('button', { name: 'Link WhatsApp' }).click();
    const socket = await whatsapp.socket(0);
    socket.showQr('2@Zm9vYmFy,cXJjb2Rl,c2Vzc2lvbg==');
    await panel.locator('img.whatsapp-qr').waitFor();
    t.match(await panel.locator('img.whatsapp-qr').getAttribute('src'), /^data:image\/svg\+xml;base64,/);
    await readmeScreenshot(page, 'channels');
    socket.open('4915100000042:5@s.whatsapp.net');
    await panel.locator('p.connected').waitFor();
    t.equal(await panel.locator('p.connected').textContent(), 'Linked to +4915100000042.');
    t.equal((await services.whatsapp.get(bot.id)).state, 'linked');

    // Leads: the custom field has its column, each lead a link to its conversation; the CSV downloads.
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.locator('table.leads').waitFor();
    t.same(await page.locator('table.leads thead th').allTextContents(), [
      'Name',
      'Email',
      'Phone',
      'Company',
      'Received',
      'Conversation',
    ]);
    t.equal(
      await page.getByRole('link', { name: 'View conversation' }).getAttribute('href'),
      `#/chatbots/${bot.id}/conversations/embed-visitor-7`,
    );
    t.same((await page.locator('table.leads tbody td').allTextContents()).slice(0, 4), [
      'Ann Lee',
      'ann@example.com',
      '',
      'Lee & Co',
    ]);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    t.equal(download.suggestedFilename(), 'leads-shop-assistant.csv');
    t.match(
      readFileSync(await download.path(), 'utf8'),
      /^lead_id,created_at,name,email,phone,company,session_id\n.*,Ann Lee,ann@example.com,,Lee & Co,embed-visitor-7\n$/,
    );

    // Conversations on every channel, named after their visitors, and a transcript.
    await page.getByRole('link', { name: 'Conversations' }).click();
    const items = page.locator('li.conversation-item');
    await items.first().waitFor();
    t.same(await items.locator('a.session').allTextContents(), ['Ann Lee', 'API · storefront']);
    t.equal(await items.nth(0).locator('.badge.escalated').textContent(), 'Escalated');
    t.equal(await items.nth(1).locator('.badge.source').textContent(), 'API');
    t.equal(await items.nth(1).locator('.lead-link').count(), 0, 'no lead, no link');

    // From a conversation to its lead, and back.
    await items.nth(0).getByRole('link', { name: 'View lead' }).click();
    const chosen = page.locator('table.leads tr.selected');
    await chosen.waitFor();
    t.equal(await chosen.locator('td').first().textContent(), 'Ann Lee');
    await chosen.getByRole('link', { name: 'View conversation' }).click();
    await page.locator('h2.session').filter({ hasText: 'Ann Lee' }).waitFor();
    t.equal(
      await page.locator('.transcript-view .visitor').textContent(),
      'Ann Lee · ann@example.com · View lead · Session embed-visitor-7',
    );

    await page.getByRole('link', { name: 'Conversations', exact: true }).first().click();
    await items.nth(1).locator('a.session').click();
    await page.locator('ol.transcript li').nth(3).waitFor();
    t.equal(await page.locator('h2.session').textContent(), 'API · storefront');
    t.same(await page.locator('ol.transcript li p').allTextContents(), [
      'When do you open?',
      'Our store opens at 9.',
      'And on Sunday?',
      'Our store opens at 9.',
    ]);
    t.equal(await page.getByRole('link', { name: 'Reply in the agent console' }).getAttribute('href'), '/agents');
    await readmeScreenshot(page, 'conversation');

    // Usage: this month against the quota, and today's bar.
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.locator('.usage-figure').waitFor();
    t.equal(await page.locator('.usage-figure').textContent(), '2 of 40,000 messages');
    t.equal(await page.locator('.chart .bar').count(), 30);
    await readmeScreenshot(page, 'usage');

    // A phone: the same app fits a 390-pixel screen; signing out everywhere ends its session too.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const small = await phone.newPage();
    small.on('pageerror', (error) => errors.push(`phone: ${error.message}`));
    await small.goto(`${gw.baseUrl}/dashboard`);
    await small.getByLabel('Email').fill('maria@shop.example');
    await small.getByLabel('Password').fill('sunny window 42');
    await small.getByRole('button', { name: 'Sign in' }).click();
    await small.getByRole('link', { name: 'Shop Assistant' }).click();
    await small.getByRole('link', { name: 'Sources' }).click();
    await small.locator('li.source-item').first().waitFor();
    t.equal(await small.evaluate('document.documentElement.scrollWidth'), 390, 'nothing wider than the screen');
    await readmeScreenshot(small, 'phone');

    await page.locator('button.account-button').click();
    await page.getByRole('menuitem', { name: 'Sign out everywhere' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed out on every device.' }).waitFor();
    await small.getByRole('link', { name: 'Widget' }).click();
    await small.getByRole('status').filter({ hasText: 'Your session has ended. Sign in again.' }).waitFor();
    t.same(errors, [], 'no page errors');
  },
);
