import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { bedName, chatCall, startGatewayCluster, TEST_BEDS } from '../support/gateway-cluster.ts';
import { scaleOwnerWithBot } from '../support/scale-owner.ts';

// 10,000 chat calls over 500 sessions, each call sent to one of three gateway processes at random
// (no stickiness): every session's calls are made one after another, 500 sessions side by side. On the
// Redis Cluster (six more processes on the same two cores), 2,000 calls over 200 sessions.
const LOAD = { server: { SESSIONS: 500, MESSAGES: 20 }, cluster: { SESSIONS: 200, MESSAGES: 10 } };

for (const bed of TEST_BEDS) {
  const { SESSIONS, MESSAGES } = LOAD[bed];
  t.test(
    `${(SESSIONS * MESSAGES).toLocaleString('en')} chat calls through three gateways: each transcript in submission order, nothing lost or doubled (${bedName(bed)})`,
    async (t) => {
      const openai = await fakeOpenAi().start();
      openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
      const cluster = await startGatewayCluster(
        3,
        {
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: `${openai.url}/v1`,
          RATE_LIMIT_PER_MINUTE: '1000000',
          CONVERSATION_RATE_LIMIT: '1000',
        },
        bed,
      );
      t.teardown(async () => {
        await cluster.stop();
        await openai.stop();
      });
      const { services } = cluster;
      const { owner, key, bot } = await scaleOwnerWithBot(services, 'Order');

      const handledBy = cluster.gateways.map(() => 0);
      const failures: string[] = [];
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          for (let m = 0; m < MESSAGES; m += 1) {
            const gateway = cluster.pick();
            handledBy[cluster.gateways.indexOf(gateway)]! += 1;
            const result = await chatCall(gateway, key, bot.id, `api-s${s}`, `s${s} m${m}`);
            const expected = { status: 200, body: { response: `AI: s${s} m${m}` } };
            if (JSON.stringify(result) !== JSON.stringify(expected))
              failures.push(`s${s} m${m}: ${JSON.stringify(result)}`);
          }
        }),
      );
      t.same(failures, [], 'every call answered with its own reply');
      t.ok(
        handledBy.every((count) => count > (SESSIONS * MESSAGES) / 5),
        `calls per gateway: ${handledBy.join(', ')}`,
      );

      let wrong = 0;
      for (let s = 0; s < SESSIONS; s += 1) {
        const transcript = await services.conversations.transcript(bot.id, `api-s${s}`);
        const expected = Array.from({ length: MESSAGES }, (_, m) => [
          ['user', `s${s} m${m}`],
          ['assistant', `AI: s${s} m${m}`],
        ]).flat();
        if (
          JSON.stringify(transcript.messages.map((message) => [message.role, message.content])) !==
          JSON.stringify(expected)
        ) {
          wrong += 1;
          if (wrong <= 3) t.comment(`session ${s}: ${JSON.stringify(transcript.messages.map((x) => x.content))}`);
        }
      }
      t.equal(wrong, 0, 'every transcript holds exactly its calls, in submission order');
      t.equal(await services.quota.used(owner.id), SESSIONS * MESSAGES, 'the quota counted each call once');
      t.equal(openai.requests.length, SESSIONS * MESSAGES, 'one LLM call per message');
    },
  );
}
