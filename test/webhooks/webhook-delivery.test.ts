import { createClient } from 'redis';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { runCli } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';
import { outboxSettled } from '../support/outbox-settled.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'hello from AI' });
const receiver = await new WebhookReceiver().start();
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_DELAYS: '0.2,0.4,0.6',
  WEBHOOK_TIMEOUT_MS: '600',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_DESTINATION_CONCURRENCY: '4',
});
t.teardown(async () => {
  await gw.stop();
  await Promise.all([openai.stop(), receiver.stop()]);
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '', WEBHOOK_ALLOW_PRIVATE: '1' };

async function chat(chatbotId: string, message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}` },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return res.status;
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const settled = (chatbotId: string) => () => outboxSettled(services, chatbotId);

async function hookFor(url: string, events: string[]) {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Hooked' });
  const hook = await services.webhooks.create(bot.id, url, events);
  receiver.secrets.push(hook.secret);
  return { bot, hook };
}

t.test(
  'no webhook selected a turn’s events: the turn records no pending entry; one created later hears the next',
  async (t) => {
    const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
    t.teardown(() => redis.close());
    const { bot } = await hookFor(receiver.url, ['lead.captured']);
    const pendingKeys = () =>
      Promise.all([
        redis.hLen(services.keys.pendingEvents(bot.id)),
        redis.zCard(services.keys.pendingEventsDue(bot.id)),
      ]);
    // What Redis is asked to do to the chatbot's pending entries, as MONITOR sees it (a transaction's
    // commands included). A bare node-redis client, destroyed at the end: the gateway's connections
    // PING every few seconds, which a connection in MONITOR mode cannot, and then never closes.
    const monitor = await createClient({ url: gw.redis.url }).connect();
    t.teardown(() => monitor.destroy());
    const dueKey = services.keys.pendingEventsDue(bot.id);
    const acknowledgements: string[] = [];
    const seen: string[] = [];
    await monitor.monitor((line: string) => {
      seen.push(line);
      if (/"zrem"/i.test(line) && line.includes(dueKey)) acknowledgements.push(line);
    });
    /** Resolves once MONITOR has shown every command sent before it. */
    const monitored = async (marker: string) => {
      await redis.echo(marker);
      await until(() => seen.some((line) => line.includes(marker)), `the marker ${marker}`);
    };
    const before = receiver.received.length;
    t.equal(await chat(bot.id, 'Anyone listening?', 'api-unheard'), 200);
    t.same(await pendingKeys(), [0, 0]);
    await monitored('after-the-first-turn');
    t.same(acknowledgements, [], 'no entry written, so none acknowledged');

    receiver.answer = () => ({ status: 200, body: 'thanks' });
    const hook = await services.webhooks.create(bot.id, receiver.url, ['message.received']);
    receiver.secrets.push(hook.secret);
    t.equal(await chat(bot.id, 'Now?', 'api-unheard'), 200);
    const got = await until(() => {
      const mine = receiver.received.slice(before);
      return mine.length >= 1 ? mine : undefined;
    }, 'one delivery');
    t.same(
      got.map((r) => [r.body.event, r.body.data.content]),
      [['message.received', 'Now?']],
      'the message after the webhook was created, and not the one before',
    );
    t.same(await pendingKeys(), [0, 0]);
    await monitored('after-the-second-turn');
    t.equal(acknowledgements.length, 1, 'its entry written and acknowledged');
  },
);

t.test(
  'a new conversation delivers conversation.started, then message.received, signed over the raw bytes',
  async (t) => {
    receiver.answer = () => ({ status: 200, body: 'thanks' });
    const { bot, hook } = await hookFor(receiver.url, ['conversation.started', 'message.received']);
    t.match(hook.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const before = receiver.received.length;
    t.equal(await chat(bot.id, 'Hi there', 'api-order'), 200);
    const got = await until(() => {
      const mine = receiver.received.slice(before);
      return mine.length >= 2 ? mine : undefined;
    }, 'two deliveries');
    t.same(
      got.map((r) => r.body.event),
      ['conversation.started', 'message.received'],
    );
    for (const request of got) {
      t.equal(request.signatureValid, true);
      t.same(request.rawHeaderNames.sort(), [
        'connection',
        'content-length',
        'content-type',
        'host',
        'user-agent',
        'x-switchboard-attempt',
        'x-switchboard-delivery',
        'x-switchboard-event',
        'x-switchboard-signature',
      ]);
      t.equal(request.headers['content-type'], 'application/json');
      t.equal(request.headers['user-agent'], 'Switchboard-Webhook/1.0');
      t.equal(request.headers['x-switchboard-event'], request.body.event);
      t.equal(request.headers['x-switchboard-attempt'], '1');
      t.same(Object.keys(request.body), ['event', 'chatbot_id', 'timestamp', 'data']);
      t.equal(request.body.chatbot_id, bot.id);
    }
    const conversation = await services.control.show(bot.id, 'api-order');
    t.same(got[0]!.body.data, {
      conversation_id: conversation.conversation_id,
      session_id: 'api-order',
      source: 'api',
    });
    t.same(got[1]!.body.data, {
      conversation_id: conversation.conversation_id,
      session_id: 'api-order',
      content: 'Hi there',
      source: 'api',
    });
    const log = await until(async () => {
      const entries = await services.deliveries.log(hook.id);
      return entries.length === 2 && entries.every((e) => e.status === 'delivered') ? entries : undefined;
    }, 'the log');
    t.same(
      log.map((d) => d.event),
      ['message.received', 'conversation.started'],
      'newest first',
    );
    t.same(log[1]!.id, got[0]!.headers['x-switchboard-delivery']);
    t.same(Object.keys(log[0]!.attempts[0]!), [
      'attempt',
      'at',
      'status_code',
      'error',
      'duration_ms',
      'response_body',
    ]);
    t.match(log[0]!.attempts[0], { attempt: 1, status_code: 200, error: null, response_body: 'thanks' });
    t.equal(log[0]!.next_attempt_at, null);
  },
);

t.test('only subscribed events are delivered; an inactive webhook gets nothing', async (t) => {
  receiver.answer = () => ({ status: 204 });
  const { bot, hook } = await hookFor(receiver.url, ['message.received']);
  const other = await services.webhooks.create(bot.id, receiver.url, ['lead.captured']);
  await chat(bot.id, 'one', 'api-sub');
  await until(async () => (await services.deliveries.log(hook.id)).length === 1, 'a delivery');
  t.same(await services.deliveries.log(other.id), []);
  await services.webhooks.setActive(hook.id, false);
  await chat(bot.id, 'two', 'api-sub');
  await until(settled(bot.id), 'the outbox settled');
  t.equal((await services.deliveries.log(hook.id)).length, 1);
  t.notOk(
    receiver.received.some((r) => r.body?.data?.session_id === 'api-sub' && r.body.data.content === 'two'),
    'nothing sent for the message after the webhook was deactivated',
  );
});

t.test('a failing receiver gets exactly 4 attempts at the configured delays, then the delivery fails', async (t) => {
  const big = 'x'.repeat(10_000);
  receiver.answer = (request) =>
    request.headers['x-switchboard-event'] === 'message.received' ? { status: 500, body: big } : { status: 200 };
  const { bot, hook } = await hookFor(receiver.url, ['message.received']);
  const before = receiver.received.length;
  await chat(bot.id, 'fail me', 'api-fail');
  const log = await until(async () => {
    const [entry] = await services.deliveries.log(hook.id);
    return entry?.status === 'failed' ? entry : undefined;
  }, 'permanent failure');
  t.equal(log.attempts.length, 4);
  t.same(
    log.attempts.map((a) => [a.attempt, a.status_code, a.error]),
    [
      [1, 500, null],
      [2, 500, null],
      [3, 500, null],
      [4, 500, null],
    ],
  );
  t.equal(log.attempts[0]!.response_body.length, 4096, 'the response body is logged up to 4 KiB');
  const requests = receiver.received.slice(before).filter((r) => r.body?.data?.session_id === 'api-fail');
  t.equal(requests.length, 4);
  t.same(
    requests.map((r) => r.headers['x-switchboard-attempt']),
    ['1', '2', '3', '4'],
  );
  t.equal(new Set(requests.map((r) => r.headers['x-switchboard-delivery'])).size, 1, 'one delivery id');
  t.equal(new Set(requests.map((r) => r.raw.toString('hex'))).size, 1, 'the same bytes every time');
  const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
  [200, 400, 600].forEach((delay, i) =>
    t.ok(gaps[i]! >= delay - 20, `retry ${i + 1} waited ${gaps[i]} ms (≥ ${delay})`),
  );
  // Nothing more follows: once settled, the delivery is out of its due queue, and no dispatcher can
  // claim it again.
  await until(settled(bot.id), 'the outbox settled');
  t.equal(receiver.received.slice(before).filter((r) => r.body?.data?.session_id === 'api-fail').length, 4);
});

t.test('a redirect is a failure and is not followed; a receiver that never answers times out', async (t) => {
  const { bot, hook } = await hookFor(receiver.url, ['message.received']);
  let calls = 0;
  receiver.answer = () => {
    calls += 1;
    if (calls === 1) return { status: 301, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } };
    if (calls === 2) return 'hang';
    return { status: 200 };
  };
  await chat(bot.id, 'redirect me', 'api-redirect');
  const log = await until(async () => {
    const [entry] = await services.deliveries.log(hook.id);
    return entry?.status === 'delivered' ? entry : undefined;
  }, 'delivery after a redirect and a timeout');
  t.same(
    log.attempts.map((a) => [a.attempt, a.status_code, a.error]),
    [
      [1, 301, null],
      [2, null, 'timed out after 600 ms'],
      [3, 200, null],
    ],
  );
  t.equal(calls, 3, 'the redirect target was never requested');
});

t.test('a hanging receiver does not hold up anyone else', async (t) => {
  const slow = await new WebhookReceiver().start();
  slow.answer = () => 'hang';
  t.teardown(() => slow.stop());
  const stuck = await hookFor(slow.url, ['message.received']);
  slow.secrets.push(...receiver.secrets);
  for (let i = 0; i < 12; i += 1) await chat(stuck.bot.id, `m${i}`, `api-stuck-${i}`);
  receiver.answer = () => ({ status: 200 });
  const healthy = await hookFor(receiver.url, ['message.received']);
  const started = Date.now();
  for (let i = 0; i < 5; i += 1) await chat(healthy.bot.id, `h${i}`, `api-healthy-${i}`);
  await until(async () => {
    const log = await services.deliveries.log(healthy.hook.id);
    return log.length === 5 && log.every((d) => d.status === 'delivered') ? true : undefined;
  }, 'healthy deliveries');
  t.ok(Date.now() - started < 2000, `healthy deliveries were not held up (${Date.now() - started} ms)`);
  t.ok(slow.received.length <= 4 * 2, `at most the per-destination cap at a time (${slow.received.length})`);
});

t.test('the CLI: create, list, rotate-secret, deliveries, redeliver, delete', async (t) => {
  receiver.answer = () => ({ status: 500 });
  const bot = await services.chatbots.create(owner.user.id, { name: 'CLI hooks' });
  const created = await runCli(
    ['webhook', 'create', '--bot', bot.id, '--url', receiver.url, '--events', 'message.received,lead.captured'],
    cliEnv,
  );
  t.equal(created.code, 0, created.stderr);
  const hook = JSON.parse(created.stdout);
  t.same(Object.keys(hook), ['id', 'url', 'events', 'secret', 'standard_webhooks', 'standard_webhooks_secret']);
  t.same(hook.events, ['message.received', 'lead.captured']);
  t.same([hook.standard_webhooks, hook.standard_webhooks_secret], [false, null], 'Standard Webhooks off by default');
  receiver.secrets.push(hook.secret);
  const listed = JSON.parse((await runCli(['webhook', 'list', '--bot', bot.id], cliEnv)).stdout);
  t.same(listed, [
    {
      id: hook.id,
      chatbot_id: bot.id,
      url: receiver.url,
      events: ['message.received', 'lead.captured'],
      standard_webhooks: false,
      active: true,
      created_at: listed[0].created_at,
    },
  ]);
  await chat(bot.id, 'to the CLI hook', 'api-cli');
  await until(async () => (await services.deliveries.log(hook.id))[0]?.status === 'failed', 'failure');
  const deliveries = JSON.parse((await runCli(['webhook', 'deliveries', '--webhook', hook.id], cliEnv)).stdout);
  t.equal(deliveries.length, 1);
  t.same(Object.keys(deliveries[0]), ['id', 'event', 'status', 'next_attempt_at', 'attempts']);
  t.equal(deliveries[0].status, 'failed');
  t.equal(deliveries[0].attempts.length, 4);
  const rotated = JSON.parse((await runCli(['webhook', 'rotate-secret', '--webhook', hook.id], cliEnv)).stdout);
  t.not(rotated.secret, hook.secret);
  receiver.secrets = [rotated.secret];
  // Answered a while after the attempt starts, so that the delivery the CLI reads back right after
  // requeueing it is still pending, however soon the gateway's dispatcher takes it.
  receiver.answer = () => ({ status: 200, delayMs: 300 });
  const redelivered = await runCli(['webhook', 'redeliver', '--delivery', deliveries[0].id], cliEnv);
  t.equal(JSON.parse(redelivered.stdout).status, 'pending');
  const after = await until(async () => {
    const [entry] = await services.deliveries.log(hook.id);
    return entry?.status === 'delivered' ? entry : undefined;
  }, 'redelivery');
  t.same(
    after.attempts.map((a) => [a.attempt, a.status_code]),
    [
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
      [5, 200],
    ],
  );
  t.equal(receiver.received.at(-1)!.signatureValid, true, 'signed with the rotated secret');
  t.same(await runCli(['webhook', 'redeliver', '--delivery', crypto.randomUUID()], cliEnv), {
    code: 1,
    stdout: '',
    stderr: 'Delivery not found.\n',
  });
  t.same(JSON.parse((await runCli(['webhook', 'delete', '--webhook', hook.id], cliEnv)).stdout), {
    id: hook.id,
    deleted: true,
  });
  t.same(await runCli(['webhook', 'deliveries', '--webhook', hook.id], cliEnv), {
    code: 1,
    stdout: '',
    stderr: 'Webhook not found.\n',
  });
});

t.test('creation validates the URL, the events, and refuses private destinations', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Validation' });
  const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
  const create = (url: string, events = 'message.received') =>
    runCli(['webhook', 'create', '--bot', bot.id, '--url', url, '--events', events], env);
  const privateDetail = 'url must point to a public address on the internet.\n';
  for (const url of [
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://192.168.1.1/hook',
    'http://172.16.0.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/hook',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0.0.0.0/hook',
    // IPv4-compatible IPv6 (the metadata address as ::a9fe:a9fe), NAT64, local-only names.
    'http://[::127.0.0.1]/hook',
    'http://[::a9fe:a9fe]/hook',
    'http://[64:ff9b::7f00:1]/hook',
    'http://LOCALHOST./hook',
    'http://metadata.internal/hook',
  ]) {
    t.same(await create(url), { code: 1, stdout: '', stderr: privateDetail }, url);
  }
  t.same(await create('ftp://example.com/x'), {
    code: 1,
    stdout: '',
    stderr: 'url must be an absolute http or https URL.\n',
  });
  t.same(await create('not a url'), { code: 1, stdout: '', stderr: 'url must be an absolute http or https URL.\n' });
  t.same(await create('https://user:pw@example.com/'), {
    code: 1,
    stdout: '',
    stderr: 'url must not contain credentials.\n',
  });
  t.same(await create('https://93.184.215.14/hook', 'message.sent'), {
    code: 1,
    stdout: '',
    stderr:
      'Unknown event message.sent; events are: lead.captured, conversation.started, message.received, conversation.escalated, conversation.taken_over, conversation.released.\n',
  });
  const ok = await create('https://93.184.215.14/hook');
  t.equal(ok.code, 0, 'a public literal address is accepted without any network access');
  // Removed at once: nothing may ever be sent off this machine.
  await services.webhooks.delete(JSON.parse(ok.stdout).id);
});
