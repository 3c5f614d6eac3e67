import t from 'tap';
import { systemClock } from '../../../src/clock.ts';
import { GraphApi } from '../../../src/channels/whatsapp/cloud/graph-api.ts';
import { GraphApiError, GraphNetworkError } from '../../../src/channels/whatsapp/cloud/graph-errors.ts';
import { FakeGraphWhatsApp } from '../../fakes/fake-graph-whatsapp.ts';
import { SimulatedClock } from '../../support/simulated-clock.ts';
import { until } from '../../support/until.ts';

const graph = await new FakeGraphWhatsApp().start();
t.teardown(() => graph.stop());
const number = graph.addNumber();
const text = { messaging_product: 'whatsapp', recipient_type: 'individual', to: '4915100000001', type: 'text', text: { preview_url: false, body: 'Hi' } }; // prettier-ignore

function api(clock: SimulatedClock, allowPrivate = true) {
  return new GraphApi({ baseUrl: graph.url, version: 'v26.0', allowPrivate, clock, firstRetryMs: 1000 });
}

/** Sends `text`, and the number of send calls the fake has had when the call is made. */
function send(client: GraphApi) {
  const before = graph.of('send').length;
  const call = client.post<{ messages: Array<{ id: string }> }>(`/${number.id}/messages`, number.token, text);
  return { call, calls: () => graph.of('send').length - before };
}

t.test('a throttled call waits for Retry-After exactly, on the injected clock', async (t) => {
  const clock = new SimulatedClock();
  graph.failNext('send', { status: 429, code: 130429, title: 'Rate limit hit', retryAfter: 7 });
  const { call, calls } = send(api(clock));
  await until(() => calls() === 1, 'the first try');
  await clock.advance(6999);
  t.equal(calls(), 1, 'nothing before 7 s');
  await clock.advance(1);
  await until(() => calls() === 2, 'the retry at 7 s');
  t.match((await call).messages, [{ id: /^wamid\./ }]);
});

t.test('without Retry-After the waits double from GRAPH_API_RETRY_MS; 5xx and throttle codes alike', async (t) => {
  const clock = new SimulatedClock();
  graph.failNext('send', { status: 500, code: 1, title: 'An unknown error occurred' });
  graph.failNext('send', { status: 400, code: 131056, title: '(Business Account, Consumer Account) pair rate limit hit' }); // prettier-ignore
  graph.failNext('send', { status: 503, code: 2, title: 'Service temporarily unavailable' });
  const { call, calls } = send(api(clock));
  for (const [wait, expected] of [
    [1000, 2],
    [2000, 3],
    [4000, 4],
  ] as const) {
    await until(() => calls() === expected - 1, `try ${expected - 1}`);
    await clock.advance(wait - 1);
    t.equal(calls(), expected - 1, `not before ${wait} ms`);
    await clock.advance(1);
    await until(() => calls() === expected, `try ${expected} after ${wait} ms`);
  }
  await call;
});

t.test('a refusal is not tried again; nor is a throttle past the retries or asking for too long', async (t) => {
  const clock = new SimulatedClock();
  graph.failNext('send', { status: 400, code: 131047, title: 'Re-engagement message' });
  const refused = send(api(clock));
  await t.rejects(refused.call, new GraphApiError(400, { code: 131047 }));
  t.equal(refused.calls(), 1);
  await t.rejects(refused.call, { message: 'The 24-hour WhatsApp window has closed: the visitor must write first.', code: 131047, status: 400 }); // prettier-ignore

  graph.failNext('send', { status: 429, code: 130429, title: 'Rate limit hit', retryAfter: 3600 });
  const tooLong = send(api(clock));
  await t.rejects(tooLong.call, { name: 'GraphApiError', code: 130429 });
  t.equal(tooLong.calls(), 1, 'an hour is not waited for');

  for (let i = 0; i < 5; i += 1) graph.failNext('send', { status: 429, code: 130429, title: 'Rate limit hit', retryAfter: 0 }); // prettier-ignore
  const exhausted = send(new GraphApi({ baseUrl: graph.url, version: 'v26.0', allowPrivate: true, clock: systemClock, firstRetryMs: 1 })); // prettier-ignore
  await t.rejects(exhausted.call, {
    message: 'WhatsApp rate limit hit: the Cloud API throughput of this number was reached; try again shortly.',
  });
  t.equal(exhausted.calls(), 5, 'the first try and four retries');
});

t.test('an unknown code keeps Meta’s own words; the network failing is told apart', async (t) => {
  const clock = new SimulatedClock();
  graph.failNext('send', { status: 400, code: 132000, title: 'Number of parameters does not match', details: 'Expected 2' }); // prettier-ignore
  await t.rejects(send(api(clock)).call, {
    message: 'WhatsApp refused the message (code 132000): (#132000) Number of parameters does not match: Expected 2',
  });
  const unreachable = new GraphApi({ baseUrl: 'http://127.0.0.1:9', version: 'v26.0', allowPrivate: true, clock, firstRetryMs: 1 }); // prettier-ignore
  await t.rejects(unreachable.get('/1', 'token'), GraphNetworkError);
  const before = graph.calls.length;
  await t.rejects(api(clock, false).get(`/${number.id}`, number.token), {
    name: 'GraphNetworkError',
    message: "WhatsApp's Cloud API could not be reached: 127.0.0.1 is not a public address",
  });
  t.equal(graph.calls.length, before, 'the SSRF guard stopped it before any request');
});
