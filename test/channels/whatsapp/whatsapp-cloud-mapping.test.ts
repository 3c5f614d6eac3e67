import t from 'tap';
import { validSignature } from '../../../src/channels/whatsapp/cloud/cloud-adapter.ts';
import { cloudRecipient, cloudSessionId } from '../../../src/channels/whatsapp/cloud/config.ts';
import { graphErrorMessage, retryable } from '../../../src/channels/whatsapp/cloud/graph-errors.ts';
import { mapCloudWebhook } from '../../../src/channels/whatsapp/cloud/inbound.ts';
import {
  hubSignature,
  messageWebhook,
  statusWebhook,
  textWebhook,
  webhookPayload,
} from '../../fakes/fake-graph-whatsapp.ts';

const number = { id: '106540352242922', display: '+1 555-0100' };
const FROM = '16505551234';
const SESSION = 'wa_16505551234@s.whatsapp.net';
const at = Date.parse('2026-11-27T10:00:00Z');

t.test('messages: text and tapped buttons as text; the rest as placeholders', async (t) => {
  const map = (message: { id: string; type: string; [field: string]: unknown }) =>
    mapCloudWebhook(messageWebhook(number, FROM, message, at), number.id);
  const base = { waId: FROM, sessionId: SESSION, sentAtMs: at };
  t.same(mapCloudWebhook(textWebhook(number, FROM, 'wamid.1', '  Does it come in blue? ', at), number.id), [
    { kind: 'text', messageId: 'wamid.1', ...base, content: 'Does it come in blue?' },
  ]);
  t.same(map({ id: 'wamid.2', type: 'button', button: { text: 'Yes, please', payload: 'YES' } }), [
    { kind: 'text', messageId: 'wamid.2', ...base, content: 'Yes, please' },
  ]);
  t.same(
    map({
      id: 'wamid.3',
      type: 'interactive',
      interactive: { type: 'list_reply', list_reply: { id: 'a', title: 'Opening hours' } },
    }),
    [
      // prettier-ignore
      { kind: 'text', messageId: 'wamid.3', ...base, content: 'Opening hours' },
    ],
  );
  const placeholders: Array<[{ id: string; type: string; [field: string]: unknown }, string]> = [
    [{ id: 'wamid.4', type: 'image', image: { caption: ' the receipt ', id: '1' } }, '[image] the receipt'],
    [{ id: 'wamid.5', type: 'sticker', sticker: { id: '2', animated: false } }, '[sticker]'],
    [{ id: 'wamid.6', type: 'location', location: { latitude: 1, longitude: 2 } }, '[location]'],
    [{ id: 'wamid.7', type: 'contacts', contacts: [{ name: { formatted_name: 'Ada' } }] }, '[contact card]'],
    [{ id: 'wamid.8', type: 'reaction', reaction: { message_id: 'wamid.OUT', emoji: '❤️' } }, '[reaction ❤️]'],
    [{ id: 'wamid.9', type: 'unsupported', errors: [{ code: 131051 }] }, '[unsupported message]'],
    [{ id: 'wamid.10', type: 'text', text: { body: '   ' } }, '[text]'],
  ];
  for (const [message, placeholder] of placeholders) {
    t.same(map(message), [{ kind: 'unsupported', messageId: message.id, ...base, placeholder }], message.type);
  }
  for (const silent of [
    { id: 'wamid.11', type: 'reaction', reaction: { message_id: 'wamid.OUT', emoji: '' } },
    { id: 'wamid.12', type: 'system', system: { body: 'changed their number', wa_id: '1' } },
    { id: 'wamid.13', type: 'request_welcome' },
  ]) {
    t.same(map(silent), [], `${silent.type} is answered with nothing`);
  }
});

t.test("only the chatbot's own number's messages field counts; malformed entries are skipped one by one", async (t) => {
  t.same(mapCloudWebhook(textWebhook({ ...number, id: '999999' }, FROM, 'wamid.1', 'hi'), number.id), []);
  const other = webhookPayload(number, {
    messages: [{ from: FROM, id: 'wamid.2', type: 'text', text: { body: 'x' } }],
  });
  other.entry[0]!.changes[0]!.field = 'message_template_status_update';
  t.same(mapCloudWebhook(other, number.id), []);
  const mixed = webhookPayload(number, {
    messages: [
      { id: 'wamid.3', type: 'text', text: { body: 'no sender' } },
      { from: 'US.13491208655302741918', id: 'wamid.4', type: 'text', text: { body: 'a username only' } },
      { from: FROM, type: 'text', text: { body: 'no id' } },
      { from: FROM, id: 'wamid.5', type: 'text', text: { body: 'fine' } },
    ],
  });
  t.same(mapCloudWebhook(mixed, number.id), [
    { kind: 'text', messageId: 'wamid.5', waId: FROM, sessionId: SESSION, content: 'fine' },
  ]);
  for (const junk of [null, 'text', [], { entry: 'no' }, { entry: [{ changes: [{ value: 1 }] }] }]) {
    t.same(mapCloudWebhook(junk, number.id), []);
  }
});

t.test('statuses and errors', async (t) => {
  const [delivered] = mapCloudWebhook(statusWebhook(number, 'wamid.OUT', FROM, 'delivered'), number.id);
  t.match(delivered, { kind: 'status', wamid: 'wamid.OUT', status: 'delivered', atMs: Number });
  t.notOk('error' in delivered!);
  const failure = { code: 131026, title: 'Message undeliverable', details: 'Unable to deliver message.' };
  t.match(mapCloudWebhook(statusWebhook(number, 'wamid.OUT', FROM, 'failed', failure), number.id), [
    { kind: 'status', status: 'failed', error: { code: 131026, title: 'Message undeliverable', error_data: { details: 'Unable to deliver message.' } } }, // prettier-ignore
  ]);
  const deleted = webhookPayload(number, { statuses: [{ id: 'wamid.OUT', status: 'deleted', timestamp: '1', recipient_id: FROM }] }); // prettier-ignore
  t.same(mapCloudWebhook(deleted, number.id), []);
  const errors = webhookPayload(number, {
    errors: [{ code: 130429, title: 'Rate limit hit', message: 'Rate limit hit' }],
  });
  t.same(mapCloudWebhook(errors, number.id), [
    { kind: 'error', error: { code: 130429, title: 'Rate limit hit', message: 'Rate limit hit' } },
  ]);
});

t.test('X-Hub-Signature-256: the hex HMAC of the exact raw body with the app secret', async (t) => {
  const raw = Buffer.from(JSON.stringify(textWebhook(number, FROM, 'wamid.1', 'hi')));
  const good = hubSignature(raw.toString(), 'app-secret');
  t.ok(validSignature(raw, good, 'app-secret'));
  t.ok(validSignature(raw, good.toUpperCase().replace('SHA256=', 'sha256='), 'app-secret'), 'hex in any case');
  for (const bad of [undefined, '', 'sha256=', good.slice(0, -1), `${good}0`, good.replace('sha256', 'sha1')]) {
    t.notOk(validSignature(raw, bad, 'app-secret'), String(bad));
  }
  t.notOk(validSignature(raw, good, 'another-secret'));
  t.notOk(validSignature(Buffer.concat([raw, Buffer.from(' ')]), good, 'app-secret'), 'one byte more');
});

t.test('error codes in words; which are tried again', async (t) => {
  t.equal(graphErrorMessage({ code: 131047 }), 'The 24-hour WhatsApp window has closed: the visitor must write first.');
  t.equal(graphErrorMessage({ code: 250 }), graphErrorMessage({ code: 10 }), 'API permission codes 200-299');
  t.equal(graphErrorMessage({}), 'WhatsApp refused the message.');
  t.equal(
    graphErrorMessage({ code: 1234, title: 'Odd', error_data: { details: 'because' } }),
    'WhatsApp refused the message (code 1234): Odd: because',
  );
  t.same(
    [
      retryable(429, undefined),
      retryable(503, undefined),
      retryable(400, 130429),
      retryable(400, 131047),
      retryable(401, 190),
    ],
    [true, true, true, false, false],
  );
});

t.test('a Cloud API chat is the same conversation as the linked device’s for the number', async (t) => {
  t.equal(cloudSessionId(FROM), SESSION);
  t.equal(cloudRecipient(SESSION), FROM);
  t.equal(cloudRecipient('wa_123@lid'), undefined);
  t.equal(cloudRecipient('tg_1'), undefined);
});
