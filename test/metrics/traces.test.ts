import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Issue 24, item 2: with OTEL_EXPORTER_OTLP_ENDPOINT set, the official SDK exports OTLP/HTTP JSON to a
// loopback collector: one trace per chat turn, per webhook attempt and per ingestion job.
const collector = await new OtlpReceiver().start();
const openai = await fakeOpenAi().start();
const receiver = await new WebhookReceiver().start();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-tenant=shop',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_RETRY_DELAYS: '60',
  },
  { traceDelayMs: 20 },
);
t.teardown(async () => {
  await gw.stop();
  await Promise.all([collector.stop(), openai.stop(), receiver.stop()]);
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Shop Bot', provider: 'chatgpt', model: 'gpt-test' });
const TURN_STEPS = ['turn.record', 'turn.announce', 'retrieval', 'chat gpt-test', 'turn.store'];

async function chat(chatbotId: string, message: string, sessionId: string) {
  const res = await fetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return res.status;
}

/** The root span named `name` that `match` picks, once the collector has it. */
function root(name: string, match: (span: ReceivedSpan) => boolean = () => true): Promise<ReceivedSpan> {
  return until(() => collector.roots(name).find(match), `a ${name} trace`);
}

/** Nothing of the visitor's words or session in any attribute of a trace. */
function leaks(traceId: string, secrets: string[]): string[] {
  return collector
    .trace(traceId)
    .flatMap((span) => Object.entries(span.attributes))
    .filter(([, value]) => secrets.some((secret) => String(value).includes(secret)))
    .map(([key]) => key);
}

t.test('a REST turn is one trace: message → turn → record, announce, retrieval, the LLM call, store', async (t) => {
  openai.behaviour = () => ({ text: 'We ship in two days.', usage: { input: 31, output: 6 } });
  t.equal(await chat(bot.id, 'How fast do you ship my parcel?', 'api-trace-1'), 200);
  const top = await root('message api', (span) => span.attributes['switchboard.outcome'] === 'reply');
  t.same(collector.tree(top), {
    name: 'message api',
    children: [{ name: 'turn', children: TURN_STEPS.map((name) => ({ name, children: [] })) }],
  });
  t.same(top.attributes, {
    'switchboard.channel': 'api',
    'switchboard.chatbot_id': bot.id,
    'switchboard.outcome': 'reply',
  });
  t.equal(top.kind, 2, 'a server span');
  t.same(top.resource['service.name'], 'switchboard');
  t.match(top.resource['service.instance.id'], /^[0-9a-f-]{36}$/);
  const call = collector.trace(top.traceId).find((span) => span.name === 'chat gpt-test')!;
  t.equal(call.kind, 3, 'a client span');
  t.same(call.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-test',
    'gen_ai.usage.input_tokens': 31,
    'gen_ai.usage.output_tokens': 6,
  });
  const retrieval = collector.trace(top.traceId).find((span) => span.name === 'retrieval')!;
  t.same(retrieval.attributes, { 'switchboard.retrieval.passages': 0, 'switchboard.retrieval.best_relevance': 0 });
  const record = collector.trace(top.traceId).find((span) => span.name === 'turn.record')!;
  t.same(record.attributes, { 'switchboard.turn.start': 'started' });
  t.same(leaks(top.traceId, ['api-trace-1', 'ship my parcel', 'We ship in two days']), []);
  t.same(collector.rejected, []);
  t.ok(
    collector.contentTypes.every((type) => type === 'application/json'),
    'OTLP/HTTP with the JSON encoding',
  );
});

t.test('a failed LLM call marks its span and the message failed', async (t) => {
  openai.behaviour = () => ({ status: 500, body: { error: { message: 'the model is down' } } });
  t.equal(await chat(bot.id, 'Anyone there?', 'api-trace-2'), 500);
  const top = await root('message api', (span) => span.attributes['switchboard.outcome'] === 'failed');
  t.same(top.status, { code: 2, message: 'LLM provider error.' });
  const call = collector.trace(top.traceId).find((span) => span.name === 'chat gpt-test')!;
  t.equal(call.status.code, 2);
  t.match(call.attributes['error.type'], /Error$/);
});

t.test('a widget turn is one trace, its LLM call with the first token', async (t) => {
  openai.behaviour = () => ({ text: 'Returns are free.', pieceIntervalMs: 5 });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: 'Can I return my shoes?' });
  await client.next('message');
  await client.close();
  const top = await root('message embed');
  t.same(collector.tree(top), {
    name: 'message embed',
    children: [{ name: 'turn', children: TURN_STEPS.map((name) => ({ name, children: [] })) }],
  });
  const call = collector.trace(top.traceId).find((span) => span.name === 'chat gpt-test')!;
  t.type(call.attributes['switchboard.llm.first_token_ms'], 'number');
  t.same(leaks(top.traceId, [String(ready.session_id), 'return my shoes', 'Returns are free']), []);
});

t.test('a webhook attempt is its own trace: the POST to the receiver and its recording', async (t) => {
  const hooked = await services.chatbots.create(owner.user.id, { name: 'Hooked', provider: 'chatgpt' });
  const hook = await services.webhooks.create(hooked.id, `${receiver.url}/hooks?key=secret-in-query`, [
    'conversation.started',
  ]);
  receiver.secrets.push(hook.secret);
  openai.behaviour = () => ({ text: 'Hello.' });
  receiver.answer = () => ({ status: 200 });
  t.equal(await chat(hooked.id, 'Hi', 'api-trace-hook-1'), 200);
  const delivered = await root('webhook delivery', (span) => span.attributes['switchboard.chatbot_id'] === hooked.id);
  t.same(collector.tree(delivered), {
    name: 'webhook delivery',
    children: [
      { name: 'POST', children: [] },
      { name: 'webhook.record', children: [] },
    ],
  });
  t.same(delivered.attributes, {
    'switchboard.chatbot_id': hooked.id,
    'switchboard.webhook.event': 'conversation.started',
    'switchboard.webhook.delivery_id': delivered.attributes['switchboard.webhook.delivery_id'],
    'switchboard.webhook.attempt': 1,
    'switchboard.webhook.outcome': 'delivered',
  });
  const post = collector.trace(delivered.traceId).find((span) => span.name === 'POST')!;
  t.same(post.attributes, {
    'http.request.method': 'POST',
    'server.address': '127.0.0.1',
    'server.port': Number(new URL(receiver.url).port),
    'http.response.status_code': 200,
  });
  t.equal(post.kind, 3);
  // A refusal: the attempt fails, to be retried.
  receiver.answer = () => ({ status: 503 });
  t.equal(await chat(hooked.id, 'Hi again', 'api-trace-hook-2'), 200);
  const refused = await root(
    'webhook delivery',
    (span) => span.attributes['switchboard.webhook.outcome'] === 'failed_attempt',
  );
  t.same(refused.status, { code: 2, message: 'receiver answered 503' });
  t.same(leaks(refused.traceId, ['secret-in-query', '/hooks']), []);
});

t.test('an ingestion job is its own trace: read, embed, index', async (t) => {
  const source = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.', 'Returns');
  const job = await root('ingestion job', (span) => span.attributes['switchboard.source_id'] === source.id);
  t.same(collector.tree(job), {
    name: 'ingestion job',
    children: ['ingestion.read', 'ingestion.embed', 'ingestion.index'].map((name) => ({ name, children: [] })),
  });
  t.same(job.attributes, {
    'switchboard.chatbot_id': bot.id,
    'switchboard.source_id': source.id,
    'switchboard.ingestion.interrupted': 0,
    'switchboard.ingestion.outcome': 'done',
  });
});

t.test('without an endpoint the gateway never loads the trace SDK', async (t) => {
  // A fresh process records every module it resolves, starts and stops a gateway, and prints those
  // of OpenTelemetry's SDK (the API package, a few kilobytes, is what the gateway's code calls).
  const support = path.resolve(import.meta.dirname, '../support/gateway.ts');
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { seen.add(specifier); return next(specifier, context); } });
    const { startGateway } = await import(${JSON.stringify(support)});
    const gw = await startGateway({ METRICS_PORT: '0' });
    await gw.stop();
    console.log(JSON.stringify([...seen].filter((s) => s.startsWith('@opentelemetry/') && s !== '@opentelemetry/api')));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  t.equal(run.status, 0, run.stderr);
  t.same(JSON.parse(run.stdout.trim().split('\n').at(-1)!), []);
});
