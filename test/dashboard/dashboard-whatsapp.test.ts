import t from 'tap';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

const whatsapp = new FakeWhatsApp();
const gw = await startGateway({}, { whatsappSockets: whatsapp.factory });
t.teardown(() => gw.stop());
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);

t.test('WhatsApp on the Channels page: link by QR code, see it linked, unlink', async (t) => {
  const bot = await services.chatbots.create(owner.id, { name: 'Phone Bot' });
  const path = `/dashboard/api/chatbots/${bot.id}/channels`;
  t.same((await client.get(path)).body, { telegram: null, whatsapp: null });
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
  t.same((await client.get(path)).body, { telegram: null, whatsapp: null });
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
