import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { messageReceived } from '../../src/webhooks/webhook-event.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startGateway } from '../support/gateway.ts';

// The one real-time check of the default 10-second timeout: a receiver that answers after 10.5 s.
t.test('a receiver answering after 10.5 s fails the attempt at 10 s, and it is retried later', async (t) => {
  const receiver = await new WebhookReceiver().start();
  receiver.answer = () => ({ status: 200, delayMs: 10_500 });
  const gw = await startGateway({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '50' });
  t.teardown(async () => {
    await gw.stop();
    await receiver.stop();
  });
  t.equal(gw.config.WEBHOOK_TIMEOUT_MS, 10_000);
  const chatbotId = crypto.randomUUID();
  const hook = await gw.app.services.webhooks.create(chatbotId, receiver.url, ['message.received']);
  receiver.secrets.push(hook.secret);
  const data = { conversation_id: crypto.randomUUID(), session_id: 'api-slow', content: 'x', source: 'api' };
  const queuedAt = Date.now();
  await gw.app.services.outbox.emit(messageReceived(chatbotId, data, systemClock.nowMicros()));
  let entry = (await gw.app.services.deliveries.log(hook.id))[0]!;
  while (entry.attempts.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    entry = (await gw.app.services.deliveries.log(hook.id))[0]!;
  }
  const [attempt] = entry.attempts;
  t.match(attempt, { attempt: 1, status_code: null, error: 'timed out after 10000 ms' });
  t.ok(attempt!.duration_ms >= 9_900 && attempt!.duration_ms < 10_500, `gave up after ${attempt!.duration_ms} ms`);
  t.equal(entry.status, 'pending');
  const nextAt = Date.parse(entry.next_attempt_at!.replace(/(\.\d{3})\d{3}/, '$1'));
  t.ok(nextAt - queuedAt >= 60_000 + 9_900, 'the first retry is a minute after the failure');
  t.equal(receiver.received.length, 1);
  t.equal(receiver.received[0]!.signatureValid, true);
});
