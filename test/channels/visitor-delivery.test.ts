import t from 'tap';
import type { ChannelPort, VisitorPush } from '../../src/channels/channel-port.ts';
import { TelegramReplies } from '../../src/channels/telegram/outbound.ts';
import type { TelegramStore } from '../../src/channels/telegram/telegram-store.ts';
import { VisitorDelivery, type CloudReach } from '../../src/channels/visitor-delivery.ts';
import { ConflictError } from '../../src/errors.ts';
import { WidgetAdapter, type WidgetDeps } from '../../src/channels/widget/adapter.ts';
import { createLogger } from '../../src/logger.ts';
import type { Signal, SignalBus } from '../../src/redis/signal-bus.ts';
import { routeSignal, type SignalTargets } from '../../src/signal-routing.ts';

const push: VisitorPush = { type: 'message', role: 'agent', content: 'Hello, Maria here.', created_at: 'now' };

/** WhatsApp's Cloud API as deliveries see it: chatbot `cloud` uses it, and its window is closed for `wa_1…`. */
function cloudReach(sent: unknown[]): CloudReach {
  return {
    serves: async (chatbotId) => chatbotId === 'cloud',
    deliver: async (...args) => void sent.push(['cloud', ...args]),
    assertCanReply: async (_chatbotId, sessionId) => {
      if (sessionId === 'wa_1@s.whatsapp.net') throw new ConflictError('window closed');
    },
  };
}

t.test('a push reaches each channel one way, from any process', async (t) => {
  const published: unknown[] = [];
  const sent: unknown[] = [];
  const delivery = new VisitorDelivery({
    signals: { publish: async (signal: unknown) => void published.push(signal) } as unknown as SignalBus,
    telegram: { deliver: async (...args: unknown[]) => void sent.push(args) },
    whatsappCloud: cloudReach(sent),
  });
  for (const session of ['embed-1', 'wa_49@s.whatsapp.net', 'tg_7', 'api-1', 'my-own-id']) {
    await delivery.deliver('bot', session, push);
  }
  await delivery.deliver('bot', 'tg_7', { type: 'typing' });
  t.same(
    sent,
    [
      ['bot', 'tg_7', push],
      ['bot', 'tg_7', { type: 'typing' }],
    ],
    'Telegram: through the Bot API from this process',
  );
  t.same(
    published,
    [
      { kind: 'visitor', chatbot_id: 'bot', session_id: 'embed-1', push },
      { kind: 'visitor', chatbot_id: 'bot', session_id: 'wa_49@s.whatsapp.net', push },
    ],
    'widget and WhatsApp: to the process holding the connection; API sessions: nothing to push to',
  );
});

t.test(
  "WhatsApp on the Cloud API: sent from this process, and the window is checked before an agent's reply",
  async (t) => {
    const published: unknown[] = [];
    const sent: unknown[] = [];
    const delivery = new VisitorDelivery({
      signals: { publish: async (signal: unknown) => void published.push(signal) } as unknown as SignalBus,
      telegram: { deliver: async () => {} },
      whatsappCloud: cloudReach(sent),
    });
    await delivery.deliver('cloud', 'wa_49@s.whatsapp.net', push);
    t.same(sent, [['cloud', 'cloud', 'wa_49@s.whatsapp.net', push]]);
    t.same(published, []);
    await t.rejects(delivery.assertCanReply('cloud', 'wa_1@s.whatsapp.net'), new ConflictError('window closed'));
    await delivery.assertCanReply('cloud', 'wa_49@s.whatsapp.net');
    await delivery.assertCanReply('linked', 'wa_1@s.whatsapp.net');
    await delivery.assertCanReply('cloud', 'tg_1');
  },
);

t.test("a pushed signal goes to the session's own channel only", async (t) => {
  const seen: string[] = [];
  const port = (channel: ChannelPort['channel']): ChannelPort => ({
    channel,
    start: async () => {},
    stop: async () => {},
    reload: async (chatbotId) => void seen.push(`${channel} reload ${chatbotId}`),
    deliver: async (_bot, session, pushed) => void seen.push(`${channel} ${pushed.type} ${session}`),
  });
  const agents = { onSignal: () => seen.push('agents') };
  const targets = {
    channels: [port('embed'), port('telegram'), port('whatsapp')],
    agents,
    logger: createLogger('silent'),
  } as unknown as SignalTargets;
  const route = (signal: Signal) => routeSignal({ ...signal, origin: 'elsewhere' }, targets);
  route({ kind: 'visitor', chatbot_id: 'b', session_id: 'wa_1@s.whatsapp.net', push });
  route({ kind: 'visitor', chatbot_id: 'b', session_id: 'embed-2', push });
  route({ kind: 'visitor', chatbot_id: 'b', session_id: 'api-3', push });
  route({ kind: 'escalated', chatbot_id: 'b', session_id: 'embed-2', escalated_at: 'now' });
  route({ kind: 'channel', chatbot_id: 'b', channel: 'telegram' });
  await Promise.resolve();
  t.same(seen, [
    'whatsapp message wa_1@s.whatsapp.net',
    'embed message embed-2',
    'embed escalated embed-2',
    'agents',
    'telegram reload b',
  ]);
});

t.test('the widget shows what a chat app shows as text its own way', async (t) => {
  const frames: unknown[] = [];
  const outbound = { deliver: (...args: unknown[]) => void frames.push(args) };
  const widget = new WidgetAdapter({ outbound } as unknown as WidgetDeps);
  await widget.deliver('b', 'embed-1', { type: 'notice', content: 'Chatbot is paused.' });
  await widget.deliver('b', 'embed-1', { type: 'typing_stopped' });
  await widget.deliver('b', 'embed-1', push);
  t.same(frames, [
    ['b', 'embed-1', { type: 'error', detail: 'Chatbot is paused.' }],
    ['b', 'embed-1', push],
  ]);
});

t.test('a Telegram chat shows no escalation: no token is read for it', async (t) => {
  const store = {
    get: () => Promise.reject(new Error('token read')),
  } as unknown as TelegramStore;
  const replies = new TelegramReplies(store, {});
  await replies.deliver('b', 'tg_1', { type: 'escalated' });
  await replies.deliver('b', 'tg_1', { type: 'typing_stopped' });
  await t.rejects(replies.deliver('b', 'tg_1', { type: 'typing' }), { message: 'token read' });
});
