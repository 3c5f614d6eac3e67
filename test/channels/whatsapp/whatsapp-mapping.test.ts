import type { WAMessage } from '@whiskeysockets/baileys';
import t from 'tap';
import { pairingPhone, whatsappJid, whatsappSessionId } from '../../../src/channels/whatsapp/rules.ts';
import { mapWhatsAppMessage, mapWhatsAppUpsert } from '../../../src/channels/whatsapp/inbound.ts';
import { loadBaileys } from '../../../src/channels/whatsapp/baileys.ts';

// Messages come from a socket, which a linked device made after loading Baileys.
await loadBaileys();

const PN = '4915112345678@s.whatsapp.net';

function message(key: Partial<WAMessage['key']>, content: WAMessage['message'], extra: Partial<WAMessage> = {}) {
  return { key: { id: 'M1', remoteJid: PN, fromMe: false, ...key }, message: content, ...extra } as WAMessage;
}

t.test('text in its plain, extended and wrapped forms', async (t) => {
  const expected = { kind: 'text', messageId: 'M1', jid: PN, sessionId: `wa_${PN}`, content: 'Hello' };
  t.same(mapWhatsAppMessage(message({}, { conversation: '  Hello ' })), expected);
  t.same(mapWhatsAppMessage(message({}, { extendedTextMessage: { text: 'Hello' } })), expected);
  t.same(
    mapWhatsAppMessage(message({}, { ephemeralMessage: { message: { extendedTextMessage: { text: 'Hello' } } } })),
    expected,
    'a disappearing message',
  );
  t.same(
    mapWhatsAppMessage(message({ remoteJid: '4915112345678:12@s.whatsapp.net' }, { conversation: 'Hello' })),
    expected,
    'a device suffix is dropped',
  );
});

t.test('the contact keeps one session whether WhatsApp addresses it by number or by LID', async (t) => {
  t.match(mapWhatsAppMessage(message({ remoteJid: '99887766554433@lid', remoteJidAlt: PN }, { conversation: 'x' })), {
    jid: PN,
    sessionId: `wa_${PN}`,
  });
  t.match(mapWhatsAppMessage(message({ remoteJid: PN, remoteJidAlt: '99887766554433@lid' }, { conversation: 'x' })), {
    jid: PN,
  });
  t.match(mapWhatsAppMessage(message({ remoteJid: '99887766554433@lid' }, { conversation: 'x' })), {
    jid: '99887766554433@lid',
    sessionId: 'wa_99887766554433@lid',
  });
});

t.test("the owner's own messages, media, and what is ignored", async (t) => {
  t.same(mapWhatsAppMessage(message({ fromMe: true }, { conversation: 'From the phone' })), {
    kind: 'owner',
    messageId: 'M1',
    jid: PN,
    sessionId: `wa_${PN}`,
    content: 'From the phone',
  });
  t.same(mapWhatsAppMessage(message({ fromMe: true }, { imageMessage: {} })), { kind: 'ignored' });
  t.same(mapWhatsAppMessage(message({}, { imageMessage: { caption: 'look' } })), {
    kind: 'unsupported',
    messageId: 'M1',
    jid: PN,
    sessionId: `wa_${PN}`,
  });
  t.same(mapWhatsAppMessage(message({}, { stickerMessage: {} })).kind, 'unsupported');
  t.same(mapWhatsAppMessage(message({}, { conversation: '   ' })).kind, 'unsupported');
  const ignored = [
    message({ remoteJid: '120363000000000000@g.us' }, { conversation: 'group' }),
    message({ remoteJid: 'status@broadcast' }, { conversation: 'status' }),
    message({ remoteJid: '1234567890@broadcast' }, { conversation: 'list' }),
    message({ remoteJid: '120363111111111111@newsletter' }, { conversation: 'news' }),
    message({}, { protocolMessage: { type: 0 } }),
    message({}, { reactionMessage: { text: '👍' } }),
    message({}, { conversation: 'stub' }, { messageStubType: 2 }),
    message({}, null),
    message({ id: '' }, { conversation: 'no id' }),
  ];
  t.same(
    ignored.map((m) => mapWhatsAppMessage(m).kind),
    ignored.map(() => 'ignored'),
  );
  t.same(mapWhatsAppUpsert({ type: 'append', messages: [message({}, { conversation: 'history' })] }), [
    { kind: 'ignored' },
  ]);
});

t.test('session ids, chat ids and pairing phone numbers', async (t) => {
  t.equal(whatsappSessionId(PN), `wa_${PN}`);
  t.equal(whatsappJid(`wa_${PN}`), PN);
  t.equal(whatsappJid('wa_99887766554433@lid'), '99887766554433@lid');
  t.equal(whatsappJid('tg_12345'), undefined);
  t.equal(whatsappJid('wa_group@g.us'), undefined);
  t.equal(pairingPhone('+49 151 1234-5678'), '4915112345678');
  t.equal(pairingPhone('(030) 1234.567'), '0301234567');
  t.equal(pairingPhone('12345'), undefined, 'too short');
  t.equal(pairingPhone('+49 151 abc'), undefined);
});
