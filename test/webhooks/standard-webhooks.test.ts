import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import t from 'tap';
import { requestHeaders } from '../../src/webhooks/webhook-sender.ts';
import {
  standardWebhooksHeaders,
  standardWebhooksKey,
  standardWebhooksSecret,
} from '../../src/webhooks/standard-webhooks.ts';
import { generateWebhookSecret } from '../../src/webhooks/webhook.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver, type ReceivedWebhook } from '../fakes/webhook-receiver.ts';
import { cliFailure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';
import { until } from '../support/until.ts';

// Standard Webhooks, opt-in per webhook (issue 24): real deliveries, a retry among them, verified by
// the official `standardwebhooks` package exactly as a receiver would use it.

t.test('one secret, two signatures: the Standard Webhooks key is the 32 bytes the secret encodes', async (t) => {
  for (let i = 0; i < 50; i += 1) {
    const secret = generateWebhookSecret();
    const key = standardWebhooksKey(secret);
    t.equal(key.length, 32);
    t.equal(`whsec_${key.toString('base64url')}`, secret);
    const standard = standardWebhooksSecret(secret);
    t.match(standard, /^whsec_[A-Za-z0-9+/]{43}=$/);
    t.same(Buffer.from(new Webhook(standard).sign('id', new Date(0), '{}').split(',')[1]!, 'base64').length, 32);
    // The documented conversion, written out as a receiver would.
    const converted = 'whsec_' + Buffer.from(secret.slice('whsec_'.length), 'base64url').toString('base64');
    t.equal(converted, standard);
  }
});

t.test('the headers are what the library signs; SPEC’s stay as they were', async (t) => {
  const secret = generateWebhookSecret();
  const body = '{"event":"lead.captured","data":{"name":"Zoë"}}';
  const headers = standardWebhooksHeaders(secret, 'delivery-1', 1795295193, body);
  const library = new Webhook(standardWebhooksSecret(secret));
  t.same(headers, {
    'webhook-id': 'delivery-1',
    'webhook-timestamp': '1795295193',
    'webhook-signature': library.sign('delivery-1', new Date(1795295193 * 1000), body),
  });
  const request = {
    url: 'http://receiver.example/hooks',
    secret,
    event: 'lead.captured',
    body,
    deliveryId: 'delivery-1',
    attempt: 2,
    timestampSeconds: 1795295193,
  };
  const spec = {
    'content-type': 'application/json',
    'user-agent': 'Switchboard-Webhook/1.0',
    'x-switchboard-signature': createHmac('sha256', secret).update(body).digest('hex'),
    'x-switchboard-event': 'lead.captured',
    'x-switchboard-delivery': 'delivery-1',
    'x-switchboard-attempt': '2',
  };
  t.same(requestHeaders({ ...request, standardWebhooks: false }), spec, 'off: SPEC’s headers only');
  t.same(requestHeaders({ ...request, standardWebhooks: true }), { ...spec, ...headers }, 'on: both');
});

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Hello.' });
const receiver = await new WebhookReceiver().start();
// The first retry a little over a second after the failure, so it carries a later timestamp.
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_DELAYS: '1.2,0.2,0.2',
  WEBHOOK_POLL_MS: '50',
});
t.teardown(async () => {
  await gw.stop();
  await Promise.all([openai.stop(), receiver.stop()]);
});
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

/** The requests the receiver got after `since`, once there are `count` of them. */
function receivedAfter(since: number, count: number): Promise<ReceivedWebhook[]> {
  return until(() => {
    const got = receiver.received.slice(since);
    return got.length >= count ? got : undefined;
  }, `${count} requests`);
}

/** The Standard Webhooks headers of a request, as the library reads them. */
function standardHeaders(request: ReceivedWebhook): Record<string, string> {
  const names = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
  return Object.fromEntries(names.map((name) => [name, String(request.headers[name])]));
}

t.test('opted in with the CLI: a failed attempt and its retry, each verified by the official library', async (t) => {
  const bot = await gw.app.services.chatbots.create(owner.user.id, { name: 'Standard' });
  const hook = await runCliJson(
    [
      ...['webhook', 'create', '--bot', bot.id, '--url', receiver.url],
      ...['--events', 'message.received', '--standard-webhooks'],
    ],
    cliEnv,
  );
  t.same(Object.keys(hook), ['id', 'url', 'events', 'secret', 'standard_webhooks', 'standard_webhooks_secret']);
  t.equal(hook.standard_webhooks, true);
  t.equal(hook.standard_webhooks_secret, standardWebhooksSecret(hook.secret));
  receiver.secrets = [hook.secret];
  receiver.answer = (request) =>
    request.headers['x-switchboard-attempt'] === '1' ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' };
  const since = receiver.received.length;
  t.equal(await chat(bot.id, 'Is this signed twice?', 'api-standard'), 200);
  const [first, retry] = await receivedAfter(since, 2);
  const library = new Webhook(hook.standard_webhooks_secret);
  for (const [name, request] of [
    ['attempt 1', first!],
    ['attempt 2', retry!],
  ] as const) {
    t.same(
      library.verify(request.raw.toString('utf8'), standardHeaders(request)),
      JSON.parse(request.raw.toString()),
      name,
    );
    t.equal(request.signatureValid, true, `${name}: X-Switchboard-Signature as ever`);
    t.equal(request.standardSignatureValid, true);
    t.same(request.rawHeaderNames.sort(), [
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
      'x-switchboard-attempt',
      'x-switchboard-delivery',
      'x-switchboard-event',
      'x-switchboard-signature',
    ]);
    const sentAt = Number(request.headers['webhook-timestamp']);
    t.ok(sentAt <= request.at / 1000 && sentAt >= request.at / 1000 - 2, `${name}: the attempt's own time`);
  }
  t.same([first!.headers['x-switchboard-attempt'], retry!.headers['x-switchboard-attempt']], ['1', '2']);
  t.equal(first!.headers['webhook-id'], first!.headers['x-switchboard-delivery'], 'webhook-id is the delivery id');
  t.equal(retry!.headers['webhook-id'], first!.headers['webhook-id'], 'the same on the retry');
  t.ok(
    Number(retry!.headers['webhook-timestamp']) > Number(first!.headers['webhook-timestamp']),
    'the retry carries a later timestamp, and a signature over it',
  );
  t.equal(first!.raw.toString(), retry!.raw.toString(), 'the same body bytes');

  // What the library refuses: a replay after its tolerance, a changed body, another timestamp.
  const realNow = Date.now;
  Date.now = () => realNow() + 6 * 60 * 1000;
  try {
    t.throws(() => library.verify(retry!.raw.toString(), standardHeaders(retry!)), {
      message: 'Message timestamp too old',
    });
  } finally {
    Date.now = realNow;
  }
  const tampered = retry!.raw.toString().replace('signed twice', 'signed thrice');
  t.throws(() => library.verify(tampered, standardHeaders(retry!)), WebhookVerificationError);
  const replayed = { ...standardHeaders(first!), 'webhook-timestamp': retry!.headers['webhook-timestamp'] as string };
  t.throws(() => library.verify(first!.raw.toString(), replayed), { message: 'No matching signature found' });
  t.throws(() =>
    new Webhook(standardWebhooksSecret(generateWebhookSecret())).verify(tampered, standardHeaders(retry!)),
  );
});

t.test('webhook configure turns them off and on; a webhook without them gets SPEC’s headers only', async (t) => {
  const bot = await gw.app.services.chatbots.create(owner.user.id, { name: 'Switching' });
  const plain = await runCliJson(
    ['webhook', 'create', '--bot', bot.id, '--url', receiver.url, '--events', 'message.received'],
    cliEnv,
  );
  t.same([plain.standard_webhooks, plain.standard_webhooks_secret], [false, null], 'off unless asked for');
  receiver.secrets = [plain.secret];
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const deliver = async (message: string) => {
    const since = receiver.received.length;
    t.equal(await chat(bot.id, message, 'api-switching'), 200);
    return (await receivedAfter(since, 1))[0]!;
  };
  const off = await deliver('first');
  t.equal(off.signatureValid, true);
  t.equal(off.standardSignatureValid, null);
  t.notOk(
    off.rawHeaderNames.some((name) => name.startsWith('webhook-')),
    'no webhook-* header',
  );

  const on = await runCliJson(['webhook', 'configure', '--webhook', plain.id, '--standard-webhooks', 'on'], cliEnv);
  t.same(on, { ...plain, standard_webhooks: true, standard_webhooks_secret: standardWebhooksSecret(plain.secret) });
  const listed = await runCliJson(['webhook', 'list', '--bot', bot.id], cliEnv);
  t.same(
    listed.map((hook: { standard_webhooks: boolean; secret?: string }) => [hook.standard_webhooks, hook.secret]),
    [[true, undefined]],
    'the list shows the setting, never a secret',
  );
  const signed = await deliver('second');
  t.equal(signed.standardSignatureValid, true);
  t.same(new Webhook(on.standard_webhooks_secret).verify(signed.raw.toString(), standardHeaders(signed)), signed.body);

  const rotated = await runCliJson(['webhook', 'rotate-secret', '--webhook', plain.id], cliEnv);
  t.equal(rotated.standard_webhooks_secret, standardWebhooksSecret(rotated.secret));
  receiver.secrets = [rotated.secret];
  const afterRotation = await deliver('third');
  t.same([afterRotation.signatureValid, afterRotation.standardSignatureValid], [true, true]);
  t.throws(() =>
    new Webhook(on.standard_webhooks_secret).verify(afterRotation.raw.toString(), standardHeaders(afterRotation)),
  );

  const offAgain = await runCliJson(
    ['webhook', 'configure', '--webhook', plain.id, '--standard-webhooks', 'off'],
    cliEnv,
  );
  t.same([offAgain.standard_webhooks, offAgain.standard_webhooks_secret], [false, null]);
  t.equal((await deliver('fourth')).standardSignatureValid, null);
  t.same(
    await runCli(['webhook', 'configure', '--webhook', plain.id, '--standard-webhooks', 'yes'], cliEnv),
    cliFailure('--standard-webhooks must be on or off'),
  );
  t.same(
    await runCli(['webhook', 'configure', '--webhook', crypto.randomUUID(), '--standard-webhooks', 'on'], cliEnv),
    cliFailure('Webhook not found.'),
  );
});
