import t from 'tap';
import { FakeGraphWhatsApp } from '../fakes/fake-graph-whatsapp.ts';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

const whatsapp = new FakeWhatsApp();
const graph = await new FakeGraphWhatsApp().start();
const gw = await startGateway(
  { GRAPH_API_BASE_URL: graph.url, CRAWL_ALLOW_PRIVATE: '1', SECRET_KEY: '6d'.repeat(32) },
  { whatsappSockets: whatsapp.factory },
);
t.teardown(async () => {
  await gw.stop();
  await graph.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);

t.test('WhatsApp on the Channels page: link by QR code, see it linked, unlink', async (t) => {
  const bot = await services.chatbots.create(owner.id, { name: 'Phone Bot' });
  const path = `/dashboard/api/chatbots/${bot.id}/channels`;
  t.same((await client.get(path)).body, { telegram: null, whatsapp: null, whatsapp_cloud: null });
  t.same(
    [
      (await client.put(`${path}/whatsapp`, { phone: 'call me' })).status,
      (await client.put(`${path}/whatsapp`, { phone: 'call me' })).body,
    ],
    [400, { detail: 'phone must be the number with its country code, like +49 151 12345678.' }],
  );

  const linking = await client.put(`${path}/whatsapp`, {});
  t.equal(linking.status, 200);
  t.match(linking.body, { chatbot_id: bot.id, state: 'linking', phone: null, qr: null, qr_image: null });
  const socket = await whatsapp.socket(0);
  socket.showQr('2@c2NhbiBtZQ==,a2V5,aWQ=');
  const withQr = await until(async () => {
    const body = (await client.get(path)).body;
    return body.whatsapp.qr_image ? body.whatsapp : undefined;
  }, 'the QR code');
  t.equal(withQr.qr, '2@c2NhbiBtZQ==,a2V5,aWQ=');
  t.match(withQr.qr_image, /^data:image\/svg\+xml;base64,/);
  t.match(
    Buffer.from(withQr.qr_image.split(',')[1], 'base64').toString(),
    /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/,
  );

  socket.open('4915100000099:2@s.whatsapp.net');
  const linked = await until(async () => {
    const body = (await client.get(path)).body;
    return body.whatsapp.state === 'linked' ? body.whatsapp : undefined;
  }, 'the link');
  t.match(linked, { state: 'linked', jid: '4915100000099@s.whatsapp.net', qr: null, qr_image: null, reason: null });
  t.match(
    (await client.put(`${path}/whatsapp`, { phone: '+49 151 0000 0000' })).body,
    { state: 'linked' },
    'linked stays linked',
  );
  t.equal(whatsapp.sockets.length, 1);

  t.same((await client.del(`${path}/whatsapp`)).body, { chatbot_id: bot.id, disconnected: true });
  await until(() => socket.loggedOut, 'the logout');
  t.same((await client.get(path)).body, { telegram: null, whatsapp: null, whatsapp_cloud: null });
  t.same(
    [(await client.del(`${path}/whatsapp`)).status, (await client.del(`${path}/whatsapp`)).body],
    [404, { detail: 'WhatsApp is not connected for this chatbot.' }],
  );
});

t.test('a pairing code for a phone number', async (t) => {
  const bot = await services.chatbots.create(owner.id, { name: 'Pairing Bot' });
  const path = `/dashboard/api/chatbots/${bot.id}/channels`;
  const before = whatsapp.sockets.length;
  t.match((await client.put(`${path}/whatsapp`, { phone: '+49 (151) 2345-6789' })).body, {
    state: 'linking',
    phone: '4915123456789',
  });
  const socket = await whatsapp.socket(before);
  socket.showQr('2@ignored');
  const pairing = await until(
    async () => (await client.get(path)).body.whatsapp.pairing_code as string | null,
    'the code',
  );
  t.equal(pairing, 'ABCD2345');
  t.same(socket.pairingRequests, ['4915123456789']);
});

t.test(
  'WhatsApp by the Cloud API: connect, see the webhook and verify token, change, switch transport, disconnect',
  async (t) => {
    const bot = await services.chatbots.create(owner.id, { name: 'Cloud Bot' });
    const path = `/dashboard/api/chatbots/${bot.id}/channels`;
    const number = graph.addNumber('+1 555-0142', 'Cloud Bakery');
    const APP_SECRET = 'ab12'.repeat(8);
    const refused: Array<[Record<string, unknown>, string]> = [
      [{}, 'phone_number_id must be the phone number id (digits) from WhatsApp → API Setup in the Meta app.'],
      [{ phone_number_id: number.id, app_secret: APP_SECRET }, 'token is required: a system-user access token, without spaces.'], // prettier-ignore
      [
        { phone_number_id: number.id, token: number.token },
        "app_secret is required: the Meta app's secret, without spaces.",
      ],
      [{ phone_number_id: number.id, token: number.token, app_secret: APP_SECRET, business_account_id: 'x' }, 'business_account_id must be the WhatsApp Business account id (digits), or left out.'], // prettier-ignore
      [{ phone_number_id: number.id, token: number.token, app_secret: APP_SECRET, text_only_notice: 'x'.repeat(501) }, 'text_only_notice must be text of at most 500 characters.'], // prettier-ignore
      [{ phone_number_id: '999999999', token: number.token, app_secret: APP_SECRET }, 'The Cloud API refused: WhatsApp refused a parameter (invalid parameter): check the phone number id.'], // prettier-ignore
    ];
    for (const [body, detail] of refused) {
      const res = await client.put(`${path}/whatsapp-cloud`, body);
      t.same([res.status, res.body], [400, { detail }], detail);
    }
    const connected = await client.put(`${path}/whatsapp-cloud`, {
      phone_number_id: number.id,
      token: number.token,
      app_secret: APP_SECRET,
    });
    t.equal(connected.status, 200);
    t.same(connected.body, {
      chatbot_id: bot.id,
      transport: 'cloud',
      phone_number_id: number.id,
      business_account_id: null,
      display_phone_number: '+1 555-0142',
      verified_name: 'Cloud Bakery',
      webhook_path: `/channels/whatsapp/${bot.id}`,
      webhook_url: null,
      verify_token: connected.body.verify_token,
      text_only_notice: 'Sorry, I can only read text messages.',
      connected_at: connected.body.connected_at,
    });
    t.same((await client.get(path)).body, { telegram: null, whatsapp: null, whatsapp_cloud: connected.body });

    const changed = await client.put(`${path}/whatsapp-cloud`, {
      phone_number_id: number.id,
      text_only_notice: 'Text only!',
    });
    t.same(
      [changed.status, changed.body.verify_token, changed.body.text_only_notice],
      [200, connected.body.verify_token, 'Text only!'],
    );
    t.equal((await services.whatsappCloud.find(bot.id))?.token, number.token, 'the token was kept');

    // Linking a device ends the Cloud API; connecting the Cloud API unlinks the device.
    const before = whatsapp.sockets.length;
    t.match((await client.put(`${path}/whatsapp`, {})).body, { state: 'linking' });
    t.match((await client.get(path)).body, { whatsapp: { state: 'linking' }, whatsapp_cloud: null });
    const socket = await whatsapp.socket(before);
    const again = await client.put(`${path}/whatsapp-cloud`, { phone_number_id: number.id, token: number.token, app_secret: APP_SECRET }); // prettier-ignore
    t.equal(again.status, 200);
    t.not(again.body.verify_token, connected.body.verify_token, 'a new connection, a new verify token');
    await until(() => socket.loggedOut || socket.ended, 'the linking socket closed');
    t.match((await client.get(path)).body, { whatsapp: null, whatsapp_cloud: { phone_number_id: number.id } });

    t.same((await client.del(`${path}/whatsapp-cloud`)).body, { chatbot_id: bot.id, disconnected: true });
    t.same(
      [(await client.del(`${path}/whatsapp-cloud`)).status, (await client.del(`${path}/whatsapp-cloud`)).body],
      [404, { detail: 'WhatsApp Cloud API is not connected for this chatbot.' }],
    );
    t.same((await client.get(path)).body, { telegram: null, whatsapp: null, whatsapp_cloud: null });
  },
);
