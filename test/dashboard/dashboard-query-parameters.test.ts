import t from 'tap';
import { testEvent } from '../../src/dashboard/test-event.ts';
import { until } from '../support/until.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';

// Issue 18, item 6: `…/retrieve?k=1.5` and `…/deliveries?offset=1.5` answered 500. Every integer
// query parameter is now read by IntegerQuery: 400 with a detail naming it and its range.
const gw = await startGateway({ WEBHOOK_ALLOW_PRIVATE: '1' });
t.teardown(() => gw.stop());
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const bot = (await client.post('/dashboard/api/chatbots', { name: 'Params' })).body;
const source = await services.intake.addText(bot.id, 'Opening hours are 9 to 5 on weekdays.', 'Hours');
await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
// A closed loopback port: the deliveries fail and stay in the log.
const created = await services.webhooks.create(bot.id, 'http://127.0.0.1:9/hook', ['message.received']);
const webhook = await services.webhooks.get(created.id);
for (let i = 0; i < 3; i += 1) {
  await services.outbox.emitTo(webhook, testEvent(bot.id, 'message.received', Date.now() * 1000));
}

const retrieve = `/dashboard/api/chatbots/${bot.id}/retrieve?query=opening%20hours`;
const deliveries = `/dashboard/api/webhooks/${webhook.id}/deliveries`;

/** Values every integer parameter refuses, by what is wrong with them. */
const WRONG = {
  'not an integer': '1.5',
  negative: '-1',
  'too large': '99999999999999999999',
  empty: '',
  'not a number': 'ten',
  exponent: '1e1',
};

t.test('retrieve: k is 1 to 50, 10 when absent', async (t) => {
  for (const [name, value] of Object.entries(WRONG)) {
    const res = await client.get(`${retrieve}&k=${value}`);
    t.same([res.status, res.body], [400, { detail: 'k must be a whole number from 1 to 50.' }], `k ${name}`);
  }
  for (const value of ['0', '51']) {
    const res = await client.get(`${retrieve}&k=${value}`);
    t.same([res.status, res.body], [400, { detail: 'k must be a whole number from 1 to 50.' }], `k=${value}`);
  }
  const one = await client.get(`${retrieve}&k=1`);
  t.same([one.status, one.body.results.length], [200, 1]);
  t.equal((await client.get(`${retrieve}&k=50`)).status, 200);
  t.equal((await client.get(retrieve)).status, 200);
});

t.test('deliveries: limit is 1 to 200 (50 when absent), offset 0 to 1000000 (0)', async (t) => {
  await until(async () => (await client.get(deliveries)).body.length === 3, 'three deliveries in the log');
  for (const [name, value] of Object.entries(WRONG)) {
    const offset = await client.get(`${deliveries}?offset=${value}`);
    t.same(
      [offset.status, offset.body],
      [400, { detail: 'offset must be a whole number from 0 to 1000000.' }],
      `offset ${name}`,
    );
    const limit = await client.get(`${deliveries}?limit=${value}`);
    t.same(
      [limit.status, limit.body],
      [400, { detail: 'limit must be a whole number from 1 to 200.' }],
      `limit ${name}`,
    );
  }
  for (const query of ['limit=0', 'limit=201', 'offset=1000001', 'limit=1&limit=2']) {
    const res = await client.get(`${deliveries}?${query}`);
    t.equal(res.status, 400, query);
  }
  const all = (await client.get(deliveries)).body;
  const page = await client.get(`${deliveries}?offset=1&limit=1`);
  t.same([page.status, page.body.map((d: { id: string }) => d.id)], [200, [all[1].id]]);
  t.same((await client.get(`${deliveries}?offset=1000000`)).body, []);
});
