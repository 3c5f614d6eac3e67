import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { bedName, startGatewayCluster, TEST_BEDS } from '../support/gateway-cluster.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// A visitor's widget socket is on gateway A, where its conversation actor lives; agents are on B and
// C. Takeover through C must silence the AI working on A (and stop its call), and the reply sent
// through B must reach the socket on A: the signals between them travel over Redis (on a Redis Cluster,
// sharded pub/sub).
for (const bed of TEST_BEDS)
  t.test(
    `a takeover on C silences the AI on A; an agent reply through B reaches the socket on A (${bedName(bed)})`,
    async (t) => {
      const openai = await fakeOpenAi().start();
      let releaseLlm: () => void = () => {};
      let hold = false;
      openai.behaviour = (req) => {
        const text = `AI: ${req.body.messages.at(-1).content}`;
        if (!hold) return { text };
        return new Promise((resolve) => (releaseLlm = () => resolve({ text })));
      };
      const cluster = await startGatewayCluster(
        3,
        { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` },
        bed,
      );
      const [a, b, c] = cluster.gateways as [
        (typeof cluster.gateways)[0],
        (typeof cluster.gateways)[0],
        (typeof cluster.gateways)[0],
      ];
      const sockets: WidgetClient[] = [];
      t.teardown(async () => {
        for (const socket of sockets) await socket.close();
        releaseLlm();
        await cluster.stop();
        await openai.stop();
      });
      const { services } = cluster;
      const owner = await services.accounts.create('cross@example.com', 'scale');
      const bot = await services.chatbots.create(owner.id, { name: 'Cross' });
      const agent = await services.agents.create(owner.id, 'Alice');

      const { client: visitor, ready } = await WidgetClient.ready(a.baseUrl, { chatbot_id: bot.id });
      sockets.push(visitor);
      const session = ready.session_id as string;
      visitor.send({ type: 'message', content: 'Hello' });
      t.match(await visitor.next('message'), { role: 'assistant', content: 'AI: Hello' });

      const agentOn = async (gateway: typeof a) => {
        const socket = await WidgetClient.at(`${gateway.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
        sockets.push(socket);
        socket.send({ type: 'auth', token: agent.token });
        await socket.next('authenticated');
        await socket.next('conversations');
        return socket;
      };
      const onB = await agentOn(b);
      const onC = await agentOn(c);

      // The AI on A is thinking about the visitor's second message when the takeover comes through C.
      hold = true;
      const calls = openai.requests.length;
      visitor.send({ type: 'message', content: 'Second question' });
      await until(() => openai.requests.length > calls, 'the LLM call on A');
      onC.send({ type: 'takeover', chatbot_id: bot.id, session_id: session, ref: 'c1' });
      t.same(await onC.next('ok'), { type: 'ok', ref: 'c1' });
      // The reply was being streamed to the widget: A stops the call when it hears of the takeover.
      const call = openai.requests.at(-1)!;
      await until(() => call.abandoned, 'the LLM call on A abandoned');
      releaseLlm();
      t.same(
        (await visitor.quietFor(300)).filter((frame) => frame.type === 'message' || frame.type === 'delta'),
        [],
        'the visitor never sees the late AI reply',
      );
      t.same(await services.conversations.discarded(bot.id, session), [], 'nothing had been written to keep aside');

      onB.send({ type: 'reply', chatbot_id: bot.id, session_id: session, content: 'Alice here, via B.', ref: 'b1' });
      t.same(await onB.next('ok'), { type: 'ok', ref: 'b1' });
      t.match(await visitor.next('message'), { role: 'agent', content: 'Alice here, via B.' });

      // While held, a visitor message on A gets no AI reply; the agent on C sees it.
      visitor.send({ type: 'message', content: 'Thanks Alice' });
      await until(
        () => onC.frames.some((frame) => frame.type === 'message' && frame.content === 'Thanks Alice'),
        'the visitor message pushed to the agent on C',
      );
      t.same(
        (await visitor.quietFor(300)).filter((frame) => frame.type === 'message'),
        [],
        'and no AI reply',
      );
      t.same(
        (await services.conversations.transcript(bot.id, session)).messages.map((m) => [m.role, m.content]),
        [
          ['user', 'Hello'],
          ['assistant', 'AI: Hello'],
          ['user', 'Second question'],
          ['agent', 'Alice here, via B.'],
          ['user', 'Thanks Alice'],
        ],
      );
    },
  );
