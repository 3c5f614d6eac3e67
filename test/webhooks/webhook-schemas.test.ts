import t from 'tap';
import { EVENT_NAMES } from '../../src/contract/webhook.ts';
import { testEvent } from '../../src/dashboard/test-event.ts';
import { eventsOf } from '../../src/webhooks/pending-event.ts';
import { webhookBodyProblems, webhookSchemas } from '../support/webhook-schemas.ts';

// docs/webhook-schemas/ compile under JSON Schema 2020-12 (Ajv, strict) and fit what the code sends;
// every delivery a receiver gets in the webhook tests is checked against them as well
// (test/fakes/webhook-receiver.ts).

const CHATBOT = '6f1c2a9e-0a4b-4c1e-9d55-3a2b1c0d9e8f';
const CONVERSATION = '0b7e3c41-5d2f-4a8e-b1c9-7e6f5d4c3b2a';
const AT = '1795295193123456';

t.test('every schema compiles in strict mode: the envelope and one per event', async (t) => {
  t.same([...webhookSchemas().keys()].sort(), ['envelope', ...EVENT_NAMES].sort());
});

t.test('the dashboard’s test event of every kind fits (its extra `test` field included)', async (t) => {
  for (const name of EVENT_NAMES) {
    t.same(webhookBodyProblems(JSON.stringify(testEvent(CHATBOT, name, Date.now() * 1000))), [], name);
  }
});

t.test('the events recorded turns, escalations, holds and leads become fit, on every channel', async (t) => {
  const entries = [
    ...['embed-1', 'wa_1', 'tg_1', 'api-1', 'visitor-42'].map((session_id) => ({
      kind: 'turn',
      at: AT,
      conversation_id: CONVERSATION,
      session_id,
      source: { e: 'embed', w: 'whatsapp', t: 'telegram' }[session_id[0]!] ?? 'api',
      is_new: 1,
      message: { content: 'Hello' },
    })),
    { kind: 'escalated', at: AT, conversation_id: CONVERSATION, session_id: 'embed-1', message_count: 3 },
    { kind: 'escalated', at: AT, conversation_id: CONVERSATION, session_id: 'tg_1', message_count: 3 },
    { kind: 'taken_over', at: AT, conversation_id: CONVERSATION, session_id: 'wa_1', agent: 'owner' },
    { kind: 'released', at: AT, conversation_id: CONVERSATION, session_id: 'api-1', agent: 'Alice' },
    {
      kind: 'lead',
      at: AT,
      lead: { lead_id: CONVERSATION, name: '', email: 'a@example.com', phone: '', custom_data: { company: 'Acme' } },
    },
  ];
  const events = entries.flatMap((entry) => eventsOf(CHATBOT, JSON.stringify(entry)));
  t.equal(events.length, 15, 'a started and a received per turn, and one per other entry');
  for (const event of events) t.same(webhookBodyProblems(JSON.stringify(event)), [], event.event);
});

t.test('a body that breaks the contract is refused, naming what is wrong; unknown fields are not', async (t) => {
  const valid = eventsOf(
    CHATBOT,
    JSON.stringify({
      kind: 'turn',
      at: AT,
      conversation_id: CONVERSATION,
      session_id: 'embed-1',
      source: 'embed',
      is_new: 0,
      message: { content: 'Hi' },
    }),
  )[0]!;
  const check = (body: unknown) => webhookBodyProblems(JSON.stringify(body));
  t.same(check({ ...valid, delivered_by: 'gateway-2', data: { ...valid.data, language: 'en' } }), [], 'extra fields');
  t.match(check({ ...valid, data: { ...valid.data, content: undefined } }), [/must have required property 'content'/]);
  t.match(check({ ...valid, data: { ...valid.data, source: 'sms' } }), [/\/data\/source must be equal to one of/]);
  t.match(check({ ...valid, timestamp: '2026-11-21T21:06:33Z' }), [/\/timestamp must match pattern/]);
  t.match(check({ ...valid, chatbot_id: 'bot_1' }).join('\n'), /\/chatbot_id must match format "uuid"/);
  t.match(check({ ...valid, event: 'message.sent' }), [/envelope: \/event/, /no schema for the event "message.sent"/]);
  t.same(webhookBodyProblems('{"event":'), ['not JSON: {"event":']);
});
