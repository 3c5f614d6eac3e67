import t from 'tap';
import { bedName, chatCall, TEST_BEDS, webhookCluster } from '../support/gateway-cluster.ts';
import { outboxSettled } from '../support/outbox-settled.ts';
import { until } from '../support/until.ts';

const SESSIONS = 40;
const MESSAGES = 5;

// Three gateways share the delivery queue. The receiver fails the first two attempts of every
// delivery: each delivery must see attempts 1, 2 and 3 exactly once each, a retry delay apart,
// whichever gateways made them.
for (const bed of TEST_BEDS)
  t.test(
    `each delivery is attempted exactly once per schedule step across three gateways (${bedName(bed)})`,
    async (t) => {
      const { cluster, openai, receiver, key, bot, hook, stop } = await webhookCluster(
        'Hooks',
        {
          RATE_LIMIT_PER_MINUTE: '100000',
        },
        bed,
      );
      t.teardown(stop);
      openai.behaviour = () => ({ text: 'ok' });
      receiver.answer = (request) =>
        Number(request.headers['x-switchboard-attempt']) <= 2
          ? { status: 503, body: 'busy' }
          : { status: 200, body: 'ok' };
      const { services } = cluster;

      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          for (let m = 0; m < MESSAGES; m += 1) {
            const result = await chatCall(cluster.pick(), key, bot.id, `api-h${s}`, `h${s} m${m}`);
            if (!('status' in result) || result.status !== 200) throw new Error(JSON.stringify(result));
          }
        }),
      );
      const deliveries = SESSIONS * (MESSAGES + 1);
      await until(() => receiver.received.length >= deliveries * 3, 'three attempts of every delivery', 60_000);
      // Every event relayed and every delivery finished: an attempt more would be at the receiver by now.
      await until(() => outboxSettled(services, bot.id), 'the outbox settled');

      const byDelivery = new Map<string, Array<{ attempt: number; at: number }>>();
      for (const request of receiver.received) {
        const id = String(request.headers['x-switchboard-delivery']);
        const attempts = byDelivery.get(id) ?? [];
        attempts.push({ attempt: Number(request.headers['x-switchboard-attempt']), at: request.at });
        byDelivery.set(id, attempts);
      }
      t.equal(byDelivery.size, deliveries, 'one delivery per event');
      t.equal(receiver.received.length, deliveries * 3, 'no attempt more');
      const wrong = [...byDelivery.entries()].filter(([, attempts]) => {
        const steps = attempts.map((attempt) => attempt.attempt);
        const spaced = attempts.every((attempt, i) => i === 0 || attempt.at - attempts[i - 1]!.at >= 950);
        return JSON.stringify(steps) !== '[1,2,3]' || !spaced;
      });
      t.same(wrong, [], 'attempts 1, 2, 3 once each, at least the retry delay apart');
      t.ok(
        receiver.received.every((request) => request.signatureValid),
        'every attempt signed',
      );
      const views = await services.deliveries.log(hook.id, { limit: 1000 });
      t.ok(
        views.length === deliveries && views.every((view) => view.status === 'delivered' && view.attempts.length === 3),
        'the delivery log shows each delivered on its third attempt',
      );
    },
  );
