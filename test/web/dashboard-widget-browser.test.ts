import t from 'tap';
import type { Page } from 'playwright-core';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// Issue 20, point 6.2, 6.3 and 6.5: the widget page saves what the owner meant (empty button rows are
// dropped, half-filled ones are pointed at, nothing typed is lost on a refusal), buttons get their ids
// from their labels, and the preview is the real widget, with the unsaved draft, answering for real.
t.test(
  'the widget page: button rows, ids from labels, the real widget as preview',
  { skip: chromiumMissing },
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = () => ({ text: 'We bake on Sundays until noon.' });
    const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await openai.stop();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Corner Bakery' });
    await services.chatbots.configure(bot.id, {
      ctas: [{ id: 'human', label: 'Talk to a person', action: 'escalate' }],
    });
    const saved = async () => (await services.chatbots.get(bot.id)).settings;
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, gw.baseUrl, owner.email);
    await page.goto(`${gw.baseUrl}/dashboard/#/chatbots/${bot.id}/widget`);
    const rows = page.locator('.ctas .editor-item');
    await rows.first().waitFor();
    const save = async (outcome: string) => {
      await page.getByRole('button', { name: 'Save widget settings' }).click();
      await page.locator('.notice').filter({ hasText: outcome }).waitFor();
    };
    const refused = 'Not saved: some rows need attention (see the messages next to them).';

    await t.test('an empty row is dropped; a new button gets its id from its label', async (t) => {
      t.equal(await page.getByLabel('Button id').count(), 0, 'no id to invent');
      await page.getByRole('button', { name: 'Add button' }).click();
      await page.getByRole('button', { name: 'Add button' }).click();
      await page.getByRole('button', { name: 'Add field' }).click();
      await rows.nth(2).getByLabel('Button label').fill('Order a cake');
      await rows.nth(2).getByLabel('Button action').selectOption('link');
      await rows.nth(2).getByLabel('Button URL').fill('https://bakery.example/order');
      await save('Widget settings saved.');
      t.same((await saved()).ctas, [
        { id: 'human', label: 'Talk to a person', action: 'escalate' },
        { id: 'order-a-cake', label: 'Order a cake', action: 'link', url: 'https://bakery.example/order' },
      ]);
      t.same((await saved()).lead_fields, [], 'the empty lead field row too');
      t.equal(await rows.count(), 2, 'the form shows what was saved');
    });

    await t.test('an edited label keeps its id; the same label twice gets a second id', async (t) => {
      await rows.nth(0).getByLabel('Button label').fill('Talk to a baker');
      await page.getByRole('button', { name: 'Add button' }).click();
      await rows.nth(2).getByLabel('Button label').fill('Order a cake!');
      await rows.nth(2).getByLabel('Button action').selectOption('message');
      await rows.nth(2).getByLabel('Button message').fill('I would like to order a cake.');
      await save('Widget settings saved.');
      t.same(
        (await saved()).ctas.map((cta) => [cta.id, cta.label]),
        [
          ['human', 'Talk to a baker'],
          ['order-a-cake', 'Order a cake'],
          ['order-a-cake-2', 'Order a cake!'],
        ],
      );
    });

    await t.test('half-filled rows are pointed at; nothing typed is lost, also when the gateway refuses', async (t) => {
      const before = await saved();
      await page.getByLabel('Title', { exact: true }).fill('Ask the bakery');
      await page.getByRole('button', { name: 'Add button' }).click();
      await rows.nth(3).getByLabel('Button label').fill('Opening hours');
      await rows.nth(3).getByLabel('Button action').selectOption('link');
      await page.getByRole('button', { name: 'Add button' }).click();
      await rows.nth(4).getByLabel('Button action').selectOption('message');
      await rows.nth(4).getByLabel('Button message').fill('Where are you?');
      await save(refused);
      t.same(await page.locator('.ctas .row-error').allTextContents(), [
        'Add the address this button opens.',
        'Give this button a label.',
      ]);
      t.same(
        await page.locator('.ctas .editor-item.invalid').evaluateAll((items) => items.length),
        2,
        'on rows 4 and 5',
      );
      t.equal(await rows.nth(3).locator('.row-error').textContent(), 'Add the address this button opens.');
      t.equal(await rows.nth(4).locator('.row-error').textContent(), 'Give this button a label.');
      t.same(await saved(), before, 'nothing saved');

      // Editing a row clears its message; the gateway's refusal of a row lands on that row.
      await rows.nth(4).getByRole('button', { name: 'Remove' }).click();
      t.equal(await page.locator('.ctas .row-error').count(), 1);
      await rows.nth(3).getByLabel('Button URL').fill('opening hours page');
      // The message goes with the page's next render (waited for: a loaded machine renders late).
      await page.locator('.ctas .row-error').first().waitFor({ state: 'detached' });
      t.equal(await page.locator('.ctas .row-error').count(), 0);
      t.equal(await rows.nth(3).getByLabel('Button URL').inputValue(), 'opening hours page', 'what was typed stays');
      await save('ctas[3].url: Invalid URL');
      t.equal(await rows.nth(3).locator('.row-error').textContent(), 'Link address: Invalid URL');
      t.same(await saved(), before, 'nothing saved');
      t.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Ask the bakery', 'the title is kept');
      t.equal(await rows.nth(3).getByLabel('Button label').inputValue(), 'Opening hours');
      t.equal(await rows.nth(3).getByLabel('Button URL').inputValue(), 'opening hours page');

      await rows.nth(3).getByLabel('Button URL').fill('https://bakery.example/hours');
      await save('Widget settings saved.');
      t.match(await saved(), {
        widget: { title: 'Ask the bakery' },
        ctas: [{ id: 'human' }, { id: 'order-a-cake' }, { id: 'order-a-cake-2' }, { id: 'opening-hours' }],
      });
    });

    await t.test('the preview is the real widget with the draft, and answers a real question', async (t) => {
      // Found the way a visitor finds them (roles and names), not by the widget's class names.
      const frame = page.frameLocator('iframe.preview-frame');
      const panel = (title: string) => frame.getByRole('dialog', { name: title });
      // The frame reloads 400 ms after the last change of the draft: one already showing the title may
      // still be the one from before the last link was typed (a CI run counted its buttons as it was
      // replaced). The frame of the saved draft is the one whose address carries that link.
      await until(
        async () =>
          (await page.locator('iframe.preview-frame').getAttribute('src'))?.includes(
            encodeURIComponent('https://bakery.example/hours'),
          ),
        'the frame of the saved draft',
      );
      await panel('Ask the bakery').waitFor();
      t.equal(await panel('Ask the bakery').isVisible(), true, 'shown open');
      for (const label of ['Talk to a baker', 'Order a cake', 'Order a cake!', 'Opening hours']) {
        // waitFor is strict: it fails on two such buttons as on none.
        await frame.getByRole('button', { name: label, exact: true }).waitFor();
        t.equal(await frame.getByRole('button', { name: label, exact: true }).count(), 1, label);
      }

      // Unsaved changes show once the owner stops typing.
      await page.getByLabel('Title', { exact: true }).fill('Cakes & bread');
      await page.locator('input[name="color"]').fill('#be123c');
      await page.getByLabel('Welcome message').fill('Hello! Ask about our cakes.');
      await page.getByRole('button', { name: 'Add button' }).click();
      await rows.nth(4).getByLabel('Button label').fill('Gluten free?');
      await rows.nth(4).getByLabel('Button action').selectOption('message');
      await rows.nth(4).getByLabel('Button message').fill('Do you bake gluten-free bread?');
      await panel('Cakes & bread').waitFor();
      await frame.getByRole('button', { name: 'Gluten free?' }).waitFor();
      await frame.getByText('Hello! Ask about our cakes.').waitFor();
      const send = frame.getByRole('button', { name: 'Send', exact: true });
      t.equal(
        await send.evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor),
        'rgb(190, 18, 60)',
      );
      t.equal((await saved()).widget.title, 'Ask the bakery', 'not saved');

      // A real question, in the chatbot's preview session.
      await frame.getByRole('textbox', { name: 'Message' }).fill('Do you bake on Sundays?');
      await send.click();
      await frame.getByText('We bake on Sundays until noon.').waitFor();
      const src = (await page.locator('iframe.preview-frame').getAttribute('src'))!;
      const session = new URL(src, gw.baseUrl).searchParams.get('session')!;
      t.match(session, /^embed-[0-9a-f-]{36}$/);
      t.same(
        (await services.conversations.transcript(bot.id, session)).messages.map((m) => [m.role, m.content]),
        [
          ['user', 'Do you bake on Sundays?'],
          ['assistant', 'We bake on Sundays until noon.'],
        ],
      );

      // A reload for the next change resumes the same conversation.
      await page.getByLabel('Welcome message').fill('Hi! Ask about our cakes.');
      await frame.getByText('Hi! Ask about our cakes.').waitFor();
      await frame.getByText('We bake on Sundays until noon.').waitFor();

      // A new preview conversation starts empty, in a session of its own.
      const opened = page.waitForEvent('websocket', (socket) => !socket.url().includes(session));
      await page.getByRole('button', { name: 'Start a new preview conversation' }).click();
      const ready = JSON.parse(
        (await (await opened).waitForEvent('framereceived', (frame) => String(frame.payload).includes('"ready"')))
          .payload as string,
      );
      t.not(ready.session_id, session);
      t.same(ready.history, []);
      await until(
        async () => (await page.locator('iframe.preview-frame').getAttribute('src'))?.includes(ready.session_id),
        'the frame of the new session',
      );
      await frame.getByText('Hi! Ask about our cakes.').waitFor();
      t.equal(await frame.getByText('Do you bake on Sundays?').count(), 0);
    });

    await t.test('a preview opening while the owner types leaves the keys in the form', async (t) => {
      // The widget's panel takes the focus when a visitor opens it; the preview opens it itself, and on
      // a loaded machine the frame of an earlier change may open just as the owner types elsewhere
      // (the likely cause of two CI failures: a typed welcome message and a typed link never reached
      // the form).
      const title = page.getByLabel('Title', { exact: true });
      const frameSrc = () => page.locator('iframe.preview-frame').getAttribute('src');
      const before = await frameSrc();
      await title.fill('Bakery help desk');
      await until(async () => (await frameSrc()) !== before, 'the frame of the new title');
      await page.frameLocator('iframe.preview-frame').getByRole('dialog', { name: 'Bakery help desk' }).waitFor();
      t.equal(
        await page.evaluate(`document.activeElement?.getAttribute('name')`),
        'title',
        'the field keeps the focus',
      );
      await page.keyboard.type('!');
      t.equal(await title.inputValue(), 'Bakery help desk!', 'what is typed next lands in it');
    });

    await t.test('the preview conversation is listed, marked as the owner’s preview', async (t) => {
      await page.getByRole('link', { name: 'Conversations' }).click();
      const item = page.locator('li.conversation-item');
      await item.first().waitFor();
      t.equal(await item.count(), 1);
      t.match(await item.locator('a.session').textContent(), /^Your preview · [0-9a-f]{4}$/);
      t.equal(await item.locator('.badge.preview').textContent(), 'Preview');
    });

    await t.test('a preview on a chatbot limited to other origins says why it cannot connect', async (t) => {
      await services.chatbots.configure(bot.id, { allowed_origins: ['https://bakery.example'] });
      await page.getByRole('link', { name: 'Widget' }).click();
      const notice = page.locator('.preview .notice.info');
      await notice.waitFor();
      t.equal(
        await notice.textContent(),
        `The preview runs on ${gw.baseUrl}, which is not among the saved allowed origins: the widget cannot connect here until you add it.`,
      );
    });

    await t.test('inputs that land before the page renders again all count', async (t) => {
      // As autofill (or a fast typist) does: three fields changed in one task, before Preact renders;
      // each card once answered with the look its render saw, so the last input undid the others.
      await page.evaluate(`(() => {
        const set = (selector, value) => {
          const field = document.querySelector(selector);
          field.value = value;
          field.dispatchEvent(new Event('input', { bubbles: true }));
        };
        set('input[name="title"]', 'Bakery help');
        set('input[name="color"]', '#0f766e');
        set('textarea[name="welcome_message"]', 'Fresh bread every morning.');
      })()`);
      await save('Widget settings saved.');
      t.match((await saved()).widget, {
        title: 'Bakery help',
        color: '#0f766e',
        welcome_message: 'Fresh bread every morning.',
      });
    });

    t.same(errors, [], 'no page errors');
  },
);

async function signIn(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chatbots' }).waitFor();
}
