import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { Scrape } from '../support/prometheus-scrape.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Issue 24, item 1: a real gateway scraped after real turns (REST and widget), webhook deliveries and
// an ingestion; every metric's name and label sets are asserted exactly, and counts by how they moved.
const TOKEN = 'metrics-token-of-the-test';
const openai = await fakeOpenAi().start();
const receiver = await new WebhookReceiver().start();
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
  CONVERSATION_RATE_LIMIT: '1000',
  METRICS_PORT: '0',
  METRICS_TOKEN: TOKEN,
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_DELAYS: '1',
  WEBHOOK_TIMEOUT_MS: '2000',
});
t.teardown(async () => {
  await gw.stop();
  await Promise.all([openai.stop(), receiver.stop()]);
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Shop Bot', provider: 'chatgpt', model: 'gpt-test' });
const CHAT_ROUTE = '/api/v1/chatbots/:chatbot_id/chat';

async function scrape(): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${gw.app.metricsPort}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`);
  return new Scrape(await res.text());
}

async function chat(message: string, sessionId: string) {
  const res = await fetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: await res.json() };
}

/** How much each of these samples moved between two scrapes (absent counts as 0). */
function moved(before: Scrape, after: Scrape, samples: Array<[string, Record<string, string>]>) {
  return samples.map(([name, labels]) => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0));
}

const stageCount = (stage: string, channel: string): [string, Record<string, string>] => [
  'switchboard_chat_turn_stage_duration_seconds_count',
  { stage, channel },
];

t.test('before any traffic: every metric family, its type, and the bounded series at 0', async (t) => {
  const first = await scrape();
  t.same(
    first.families('switchboard_').map((name) => [name, first.types.get(name)]),
    [
      ['switchboard_chat_turn_duration_seconds', 'histogram'],
      ['switchboard_chat_turn_stage_duration_seconds', 'histogram'],
      ['switchboard_chat_turns_total', 'counter'],
      ['switchboard_conversation_actors', 'gauge'],
      ['switchboard_http_request_duration_seconds', 'histogram'],
      ['switchboard_http_requests_total', 'counter'],
      ['switchboard_ingestion_job_duration_seconds', 'histogram'],
      ['switchboard_ingestion_jobs_queued', 'gauge'],
      ['switchboard_ingestion_jobs_running', 'gauge'],
      ['switchboard_ingestion_jobs_total', 'counter'],
      ['switchboard_llm_calls_total', 'counter'],
      ['switchboard_llm_errors_total', 'counter'],
      ['switchboard_llm_tokens_total', 'counter'],
      ['switchboard_metrics_redis_read_failures_total', 'counter'],
      ['switchboard_open_sockets', 'gauge'],
      ['switchboard_redis_command_duration_seconds', 'histogram'],
      ['switchboard_redis_command_errors_total', 'counter'],
      ['switchboard_search_index_chunks_loaded', 'gauge'],
      ['switchboard_search_index_loading', 'gauge'],
      ['switchboard_webhook_deliveries_pending', 'gauge'],
      ['switchboard_webhook_delivery_attempt_duration_seconds', 'histogram'],
      ['switchboard_webhook_delivery_attempts_total', 'counter'],
    ],
  );
  t.same(first.labelSets('switchboard_webhook_delivery_attempts_total'), [
    { outcome: 'delivered' },
    { outcome: 'failed_attempt' },
    { outcome: 'permanently_failed' },
    { outcome: 'stale' },
  ]);
  t.same(first.labelSets('switchboard_ingestion_jobs_total'), [
    { outcome: 'cancelled' },
    { outcome: 'done' },
    { outcome: 'error' },
    { outcome: 'failed' },
    { outcome: 'lease_lost' },
  ]);
  const providers = ['chatgpt', 'gemini', 'ollama'];
  t.same(first.labelSets('switchboard_llm_errors_total'), [
    ...providers.map((provider) => ({ call: 'answer', provider })),
    ...providers.map((provider) => ({ call: 'rewrite', provider })),
  ]);
  t.same(first.labelSets('switchboard_llm_tokens_total'), [
    ...providers.map((provider) => ({ direction: 'input', provider })),
    ...providers.map((provider) => ({ direction: 'output', provider })),
  ]);
  t.same(first.labelSets('switchboard_open_sockets'), [{ kind: 'agent' }, { kind: 'widget' }]);
  t.equal(first.value('switchboard_webhook_deliveries_pending'), 0);
  t.equal(first.value('switchboard_ingestion_jobs_queued'), 0);
  t.equal(first.value('switchboard_ingestion_jobs_running'), 0);
  t.equal(first.value('switchboard_conversation_actors'), 0);
  t.equal(first.value('switchboard_metrics_redis_read_failures_total'), 0);
  // Node's standard metrics keep their standard names.
  for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
    t.ok(first.types.has(name), name);
  }
  // The gateway's start-up already went to Redis, and was timed per command.
  t.ok((first.value('switchboard_redis_command_duration_seconds_count', { command: 'EVALSHA' }) ?? 0) > 0);
});

t.test('a REST turn: its route, its stages, its LLM call and tokens, one live actor', async (t) => {
  openai.behaviour = () => ({ text: 'We ship in two days.', usage: { input: 120, output: 7 } });
  const before = await scrape();
  t.same(await chat('How fast do you ship?', 'api-metrics-1'), {
    status: 200,
    body: { response: 'We ship in two days.' },
  });
  const after = await scrape();
  t.same(
    moved(before, after, [
      ['switchboard_http_requests_total', { method: 'POST', route: CHAT_ROUTE, status_class: '2xx' }],
      ['switchboard_http_request_duration_seconds_count', { method: 'POST', route: CHAT_ROUTE }],
      ['switchboard_chat_turns_total', { channel: 'api', outcome: 'reply' }],
      ['switchboard_chat_turn_duration_seconds_count', { channel: 'api', outcome: 'reply' }],
      stageCount('admit', 'api'),
      stageCount('retrieve', 'api'),
      stageCount('llm_total', 'api'),
      stageCount('llm_first_token', 'api'),
      stageCount('rewrite', 'api'),
      stageCount('store', 'api'),
      ['switchboard_llm_calls_total', { provider: 'chatgpt', call: 'answer' }],
      ['switchboard_llm_errors_total', { provider: 'chatgpt', call: 'answer' }],
      ['switchboard_llm_tokens_total', { provider: 'chatgpt', direction: 'input' }],
      ['switchboard_llm_tokens_total', { provider: 'chatgpt', direction: 'output' }],
    ]),
    [1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 120, 7],
    'a REST reply is not streamed: no first-token stage; no rewrite unless the chatbot has it on',
  );
  t.same(after.labelSets('switchboard_chat_turns_total'), [{ channel: 'api', outcome: 'reply' }]);
  t.same(
    after.labelSets('switchboard_chat_turn_stage_duration_seconds').map((labels) => labels.stage),
    ['admit', 'llm_total', 'retrieve', 'store'],
  );
  t.equal(after.value('switchboard_conversation_actors'), 1);
  t.ok((after.value('switchboard_redis_command_duration_seconds_count', { command: 'EVALSHA' }) ?? 0) > 0);
  // Route patterns, never URLs: no chatbot id in any label of the scrape.
  t.notOk(after.samples.some((sample) => Object.values(sample.labels).some((value) => value.includes(bot.id))));
});

t.test('an LLM failure counts as an error of its provider, and the turn as failed', async (t) => {
  openai.behaviour = () => ({ status: 500, body: { error: { message: 'the model is down' } } });
  const before = await scrape();
  t.same(await chat('Anyone there?', 'api-metrics-2'), { status: 500, body: { detail: 'LLM provider error.' } });
  const after = await scrape();
  t.same(
    moved(before, after, [
      ['switchboard_llm_calls_total', { provider: 'chatgpt', call: 'answer' }],
      ['switchboard_llm_errors_total', { provider: 'chatgpt', call: 'answer' }],
      ['switchboard_chat_turns_total', { channel: 'api', outcome: 'failed' }],
      ['switchboard_chat_turns_total', { channel: 'api', outcome: 'reply' }],
      ['switchboard_http_requests_total', { method: 'POST', route: CHAT_ROUTE, status_class: '5xx' }],
      ['switchboard_llm_tokens_total', { provider: 'chatgpt', direction: 'input' }],
    ]),
    [1, 1, 1, 0, 1, 0],
  );
});

t.test('a widget turn streams: first-token stage, the open socket by kind, an agent socket', async (t) => {
  openai.behaviour = () => ({ text: 'Returns are free.', pieceIntervalMs: 5, usage: { input: 50, output: 4 } });
  const before = await scrape();
  const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const agent = await WidgetClient.at(`${gw.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
  const open = await scrape();
  t.same(
    [
      open.value('switchboard_open_sockets', { kind: 'widget' }),
      open.value('switchboard_open_sockets', { kind: 'agent' }),
    ],
    [1, 1],
  );
  client.send({ type: 'message', content: 'Can I return shoes?' });
  t.match(await client.next('message'), { role: 'assistant', content: 'Returns are free.' });
  // The turn is counted once its channel is answered, a moment after the reply frame went out.
  await until(
    async () => (await scrape()).value('switchboard_chat_turns_total', { channel: 'embed', outcome: 'reply' }),
    'the widget turn counted',
  );
  const after = await scrape();
  t.same(
    moved(before, after, [
      ['switchboard_chat_turns_total', { channel: 'embed', outcome: 'reply' }],
      stageCount('admit', 'embed'),
      stageCount('retrieve', 'embed'),
      stageCount('llm_first_token', 'embed'),
      stageCount('llm_total', 'embed'),
      stageCount('store', 'embed'),
      ['switchboard_llm_tokens_total', { provider: 'chatgpt', direction: 'output' }],
      ['switchboard_conversation_actors', {}],
    ]),
    [1, 1, 1, 1, 1, 1, 4, 1],
  );
  await Promise.all([client.close(), agent.close()]);
  const closed = await until(async () => {
    const now = await scrape();
    return now.value('switchboard_open_sockets', { kind: 'widget' }) === 0 ? now : undefined;
  }, 'the sockets closed');
  t.equal(closed.value('switchboard_open_sockets', { kind: 'agent' }), 0);
});

t.test('webhook attempts by outcome, with their latency, and the pending deliveries', async (t) => {
  const hooked = await services.chatbots.create(owner.user.id, { name: 'Hooked', provider: 'chatgpt' });
  const hook = await services.webhooks.create(hooked.id, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  openai.behaviour = () => ({ text: 'Hello.' });
  receiver.answer = () => ({ status: 200 });
  const before = await scrape();
  const ask = (sessionId: string) =>
    fetch(`${gw.baseUrl}/api/v1/chatbots/${hooked.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Hi', session_id: sessionId }),
    });
  t.equal((await ask('api-hooked-1')).status, 200);
  const delivered = await until(async () => {
    const now = await scrape();
    return now.value('switchboard_webhook_delivery_attempts_total', { outcome: 'delivered' }) ===
      (before.value('switchboard_webhook_delivery_attempts_total', { outcome: 'delivered' }) ?? 0) + 1
      ? now
      : undefined;
  }, 'the delivery');
  t.same(
    moved(before, delivered, [
      ['switchboard_webhook_delivery_attempt_duration_seconds_count', { outcome: 'delivered' }],
      ['switchboard_webhook_delivery_attempts_total', { outcome: 'failed_attempt' }],
    ]),
    [1, 0],
  );
  // A receiver that fails: the first attempt waits a second for its one retry (pending meanwhile),
  // and the retry, the last attempt, fails for good.
  receiver.answer = () => ({ status: 503 });
  t.equal((await ask('api-hooked-2')).status, 200);
  const waiting = await until(async () => {
    const now = await scrape();
    return now.value('switchboard_webhook_delivery_attempts_total', { outcome: 'failed_attempt' }) === 1
      ? now
      : undefined;
  }, 'the failed first attempt');
  t.equal(waiting.value('switchboard_webhook_deliveries_pending'), 1);
  const failed = await until(async () => {
    const now = await scrape();
    return now.value('switchboard_webhook_delivery_attempts_total', { outcome: 'permanently_failed' }) === 1
      ? now
      : undefined;
  }, 'the last attempt');
  t.same(
    moved(before, failed, [
      ['switchboard_webhook_delivery_attempts_total', { outcome: 'delivered' }],
      ['switchboard_webhook_delivery_attempts_total', { outcome: 'failed_attempt' }],
      ['switchboard_webhook_delivery_attempts_total', { outcome: 'permanently_failed' }],
      ['switchboard_webhook_delivery_attempt_duration_seconds_count', { outcome: 'failed_attempt' }],
      ['switchboard_webhook_delivery_attempt_duration_seconds_count', { outcome: 'permanently_failed' }],
    ]),
    [1, 1, 1, 1, 1],
  );
  t.equal(failed.value('switchboard_webhook_deliveries_pending'), 0);
});

t.test('an ingestion job counts as done, and the queue gauges go back to 0', async (t) => {
  const before = await scrape();
  const source = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.', 'Returns');
  await until(async () => (await services.sources.get(source.id)).status === 'done', 'the ingestion', 30_000);
  const after = await until(async () => {
    const now = await scrape();
    return now.value('switchboard_ingestion_jobs_running') === 0 ? now : undefined;
  }, 'the job ended');
  t.same(
    moved(before, after, [
      ['switchboard_ingestion_jobs_total', { outcome: 'done' }],
      ['switchboard_ingestion_job_duration_seconds_count', { outcome: 'done' }],
      ['switchboard_ingestion_jobs_total', { outcome: 'failed' }],
    ]),
    [1, 1, 0],
  );
  t.equal(after.value('switchboard_ingestion_jobs_queued'), 0);
});
