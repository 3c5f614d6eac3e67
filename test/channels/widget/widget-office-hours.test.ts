import t from 'tap';
import { chatText } from '../../../src/channels/channel-port.ts';
import { fixedTimeClock } from '../../../src/clock.ts';
import type { OfficeHours } from '../../../src/contract/chatbot-settings.ts';
import { startGateway } from '../../support/gateway.ts';
import { WidgetClient } from '../../support/widget-client.ts';

// Issue 22, item 3, on the gateway's clock (set by the test): outside office hours a visitor who asks
// for a person is told when the office opens (the widget then offers the contact form); inside them
// with nobody online, the contact form once the owner's wait is over; with an agent online, never.
let now = Date.parse('2026-11-28T09:00:00Z'); // Saturday, 10:00 in Berlin
const gw = await startGateway({}, { clock: fixedTimeClock(() => now * 1000) });
t.teardown(() => gw.stop());
const { services } = gw.app;
const owner = await services.accounts.create('hours@example.com', 'scale');
const bot = await services.chatbots.create(owner.id, { name: 'Office' });
const hours: OfficeHours = {
  enabled: true,
  time_zone: 'Europe/Berlin',
  weekly: {
    mon: [['09:00', '17:00']],
    tue: [['09:00', '17:00']],
    wed: [['09:00', '17:00']],
    thu: [['09:00', '17:00']],
    fri: [['09:00', '17:00']],
    sat: [],
    sun: [],
  },
  holidays: ['2026-11-30'],
  contact_after_minutes: 5,
};
await services.chatbots.configure(bot.id, { hours });

const escalated = async () => {
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'escalate' });
  const handoff = await client.next('handoff');
  return { client, session: ready.session_id as string, handoff };
};
const reopen = async (session: string) => {
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, session_id: session });
  await client.close();
  return ready.handoff;
};

t.test('outside office hours: closed, and when the office opens (after a holiday)', async (t) => {
  const { client, handoff } = await escalated();
  t.same(handoff, {
    type: 'handoff',
    change: 'escalated',
    state: 'waiting',
    agent: null,
    agents_online: false,
    open: false,
    opens_at: '2026-12-01T08:00:00.000000+00:00',
    time_zone: 'Europe/Berlin',
    contact_in_ms: null,
  });
  t.equal(
    chatText(handoff as never),
    "We've asked a person to join. We're closed right now; someone will reply here when we open (Tuesday 09:00 Europe/Berlin time).",
    'what Telegram and WhatsApp say',
  );
  await client.close();
});

t.test(
  'in office hours with nobody online: the contact form after the wait, counted down on reconnecting',
  async (t) => {
    now = Date.parse('2026-12-01T09:00:00Z'); // Tuesday, 10:00 in Berlin
    const { client, session, handoff } = await escalated();
    t.match(handoff, { state: 'waiting', open: true, opens_at: null, agents_online: false, contact_in_ms: 300_000 });
    now += 120_000;
    t.match(await reopen(session), { state: 'waiting', contact_in_ms: 180_000 });
    now += 181_000;
    t.match(await reopen(session), { state: 'waiting', contact_in_ms: 0 });
    await client.close();
  },
);

t.test('in office hours with an agent online: no contact form to count down to', async (t) => {
  await services.presence.enter(owner.id, 'an-agent', 60_000);
  t.teardown(() => services.presence.leave(owner.id, 'an-agent'));
  const { client, handoff } = await escalated();
  t.match(handoff, { state: 'waiting', open: true, agents_online: true, contact_in_ms: null });
  await client.close();
});

t.test('without office hours: always open, the contact form at once when nobody is online', async (t) => {
  await services.chatbots.configure(bot.id, { hours: { enabled: false } });
  const { client, handoff } = await escalated();
  t.same(handoff, {
    type: 'handoff',
    change: 'escalated',
    state: 'waiting',
    agent: null,
    agents_online: false,
    open: true,
    opens_at: null,
    time_zone: null,
    contact_in_ms: 0,
  });
  await client.close();
});
