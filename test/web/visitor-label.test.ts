import t from 'tap';
import { channelName, shortSessionId, visitorLabel } from '../../web/shared/visitor-label.ts';

const UUID = 'd6a4f1c2-0b1e-4c7a-9d2e-5f8a7b6c4d3e';

t.test(
  'a conversation is named after its lead (the dashboard and the console alike), else its channel and a short id',
  async (t) => {
    const conversation = { session_id: `embed-${UUID}`, source: 'embed', lead: null, preview: false };
    const lead = { lead_id: UUID, name: 'Ann Lee', email: 'ann@example.com' };
    t.equal(visitorLabel({ ...conversation, lead }), 'Ann Lee');
    t.equal(visitorLabel({ ...conversation, lead: { ...lead, name: '  ' } }), 'ann@example.com');
    t.equal(visitorLabel({ ...conversation, lead: { ...lead, name: '', email: '' } }), 'Web visitor · d6a4');
    t.equal(visitorLabel(conversation), 'Web visitor · d6a4');
    t.equal(visitorLabel({ ...conversation, preview: true }), 'Your preview · d6a4');
    t.equal(visitorLabel({ ...conversation, preview: true, lead }), 'Ann Lee');
    t.equal(
      visitorLabel({ ...conversation, session_id: 'wa_4915112345678@s.whatsapp.net', source: 'whatsapp' }),
      'WhatsApp · +4915112345678',
    );
    t.equal(visitorLabel({ ...conversation, session_id: 'tg_123456789', source: 'telegram' }), 'Telegram · 123456789');
    t.equal(visitorLabel({ ...conversation, session_id: 'api-storefront', source: 'api' }), 'API · storefront');
    t.equal(visitorLabel({ ...conversation, session_id: 'order-4711', source: 'api' }), 'API · order-4711');
  },
);

t.test('short session ids', async (t) => {
  t.equal(shortSessionId(`api-${UUID}`), 'd6a4');
  t.equal(shortSessionId('wa_120363025246125486@g.us'), '12036302…');
  t.equal(shortSessionId('embed-visitor-7'), 'visitor-7');
});

t.test('a lead with only a phone (the console knows it), and channel names', async (t) => {
  const phoneOnly = { name: '', email: '', phone: '+44 20 7946 0000' };
  t.equal(visitorLabel({ session_id: 'tg_123456789', source: 'telegram', lead: phoneOnly }), '+44 20 7946 0000');
  t.same(
    ['embed', 'telegram', 'whatsapp', 'api'].map((source) => channelName({ source, session_id: '' })),
    ['Web widget', 'Telegram', 'WhatsApp', 'API'],
  );
  t.equal(channelName({ source: '', session_id: 'wa_1@s.whatsapp.net' }), 'WhatsApp', 'from the prefix');
  t.equal(channelName({ source: 'sms', session_id: 'x' }), 'sms');
});
