import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { chatCall, startGatewayCluster } from '../support/gateway-cluster.ts';
import { scaleOwnerWithBot } from '../support/scale-owner.ts';

const SESSIONS = 100;

// Two messages of one conversation arriving at the same moment on two gateways: one takes the
// conversation's lease and the other waits for it, so the transcript holds both turns whole, one
// after the other, each reply right after its own message and seeing the turn before it.
t.test('two messages of one conversation at once on two gateways are answered one after the other', async (t) => {
  const openai = await fakeOpenAi().start();
  openai.behaviour = (req) => ({
    text: `AI: ${req.body.messages.at(-1).content} (after ${req.body.messages.length - 2} turns)`,
    delayMs: 30,
  });
  const cluster = await startGatewayCluster(2, {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  t.teardown(async () => {
    await cluster.stop();
    await openai.stop();
  });
  const { services } = cluster;
  const { key, bot } = await scaleOwnerWithBot(services, 'Pairs');
  const [a, b] = cluster.gateways as [(typeof cluster.gateways)[0], (typeof cluster.gateways)[0]];

  const results = await Promise.all(
    Array.from({ length: SESSIONS }, (_, s) =>
      Promise.all([
        chatCall(a, key, bot.id, `api-pair-${s}`, `s${s} via A`),
        chatCall(b, key, bot.id, `api-pair-${s}`, `s${s} via B`),
      ]),
    ),
  );
  t.ok(
    results.flat().every((result) => 'status' in result && result.status === 200),
    'every call answered 200',
  );
  let wrong = 0;
  for (let s = 0; s < SESSIONS; s += 1) {
    const messages = (await services.conversations.transcript(bot.id, `api-pair-${s}`)).messages;
    const [first, firstReply, second, secondReply] = messages;
    const whole =
      messages.length === 4 &&
      first?.role === 'user' &&
      second?.role === 'user' &&
      new Set([first.content, second.content]).size === 2 &&
      firstReply?.content === `AI: ${first.content} (after 0 turns)` &&
      secondReply?.content === `AI: ${second.content} (after 2 turns)`;
    if (!whole) {
      wrong += 1;
      if (wrong <= 3) t.comment(JSON.stringify(messages.map((m) => [m.role, m.content])));
    }
  }
  t.equal(wrong, 0, 'each transcript: one whole turn, then the other, the second seeing the first');
});
