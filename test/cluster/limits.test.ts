import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chatCall, startGatewayCluster, type ChatResult } from '../support/gateway-cluster.ts';

/** How many of the results had each status and detail, as `200` or `429 Detail text.`. */
function tally(results: ChatResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) {
    const label =
      'error' in result
        ? `error ${result.error}`
        : `${result.status}${result.body.detail ? ` ${result.body.detail}` : ''}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

// Limits are decided by Lua scripts in Redis, so three gateways admit exactly what one would.
t.test('the key rate limit, the quota and the conversation limit stay exact across three gateways', async (t) => {
  const openai = await fakeOpenAi().start();
  openai.behaviour = () => ({ text: 'ok', delayMs: 20 });
  const cluster = await startGatewayCluster(3, {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    PLAN_QUOTAS: 'free=100,scale=200',
    CONVERSATION_RATE_LIMIT: '20',
  });
  t.teardown(async () => {
    await cluster.stop();
    await openai.stop();
  });
  const { services } = cluster;
  const owner = await services.accounts.create('limits@example.com', 'scale');
  const bot = await services.chatbots.create(owner.id, { name: 'Limits' });
  const spread = (count: number, call: (i: number) => Promise<ChatResult>) =>
    Promise.all(Array.from({ length: count }, (_, i) => call(i)));

  // 60 per minute per key: 200 calls at once over three gateways.
  const limited = await services.apiKeys.create(owner.id, 'limited');
  const rate = await spread(200, (i) => chatCall(cluster.pick(), limited.key, bot.id, `api-rate-${i}`, 'hi'));
  t.same(tally(rate), { 200: 60, '429 API rate limit exceeded. Max 60 requests per minute.': 140 });

  // 20 user messages per minute per conversation: 50 at once on one conversation.
  const conversation = await services.apiKeys.create(owner.id, 'conversation');
  const perConversation = await spread(50, () =>
    chatCall(cluster.pick(), conversation.key, bot.id, 'api-one-conversation', 'again'),
  );
  t.same(tally(perConversation), { 200: 20, '429 Conversation rate limit exceeded.': 30 });

  // The monthly quota (Scale is set to 200 user messages here): 300 calls at once from a fresh
  // account's five keys (60 each, so the key limit refuses none), every one a new conversation.
  const spender = await services.accounts.create('quota@example.com', 'scale');
  const spenderBot = await services.chatbots.create(spender.id, { name: 'Quota' });
  const keys = await Promise.all([1, 2, 3, 4, 5].map((n) => services.apiKeys.create(spender.id, `k${n}`)));
  const quota = await spread(300, (i) =>
    chatCall(cluster.pick(), keys[i % 5]!.key, spenderBot.id, `api-quota-${i}`, 'spend'),
  );
  t.same(tally(quota), { 200: 200, '429 Monthly message limit reached.': 100 });
  t.equal(await services.quota.used(spender.id), 200);
});
