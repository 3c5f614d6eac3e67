import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { startGatewayCluster } from '../support/gateway-cluster.ts';
import { until } from '../support/until.ts';
import { WidgetClient, type Frame } from '../support/widget-client.ts';

// Issue 22: what a visitor sees of a hand-off, with their widget on gateway A and the agent on B:
// one state at a time (the AI, waiting for a person, a named agent, the AI again), told as it
// changes and restored on reconnecting; the agent's name and initial on their typing and messages;
// a reply being streamed on A cut the moment B's takeover is answered.
t.test('the hand-off as the visitor on A sees it, the agent working on B', async (t) => {
  const openai = await fakeOpenAi().start();
  openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  const cluster = await startGatewayCluster(2, { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
  const [a, b] = cluster.gateways as [(typeof cluster.gateways)[0], (typeof cluster.gateways)[0]];
  const sockets: WidgetClient[] = [];
  t.teardown(async () => {
    for (const socket of sockets) await socket.close();
    await cluster.stop();
    await openai.stop();
  });
  const { services } = cluster;
  const owner = await services.accounts.create('handoff@example.com', 'scale');
  const bot = await services.chatbots.create(owner.id, { name: 'Handoff' });
  const maria = await services.agents.create(owner.id, 'Maria', 'M');
  await services.agents.create(owner.id, 'Omar');
  const MARIA = { name: 'Maria', initial: 'M' };
  // No office hours: always open; with Maria online, no contact form to count down to.
  const HOURS = { open: true, opens_at: null, time_zone: null, contact_in_ms: null };

  const visit = async (session?: string) => {
    const opened = await WidgetClient.ready(a.baseUrl, {
      chatbot_id: bot.id,
      ...(session ? { session_id: session } : {}),
    });
    sockets.push(opened.client);
    return opened;
  };
  const { client: visitor, ready } = await visit();
  const session = ready.session_id as string;
  t.same(ready.handoff, { state: 'ai', agent: null, agents_online: false, ...HOURS }, 'a new visitor talks to the AI');

  const agent = await WidgetClient.at(`${b.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
  sockets.push(agent);
  agent.send({ type: 'auth', token: maria.token });
  await agent.next('authenticated');
  await agent.next('conversations');
  const command = async (frame: Record<string, unknown>) => {
    const ref = `r${Math.random()}`;
    agent.send({ ...frame, chatbot_id: bot.id, session_id: session, ref });
    const answer = await agent.next(['ok', 'error']);
    t.equal(answer.ref, ref);
    return answer;
  };

  await t.test('asking for a person: waiting, once, restored on reconnecting', async (t) => {
    visitor.send({ type: 'escalate' });
    t.same(await visitor.next('handoff'), {
      type: 'handoff',
      change: 'escalated',
      state: 'waiting',
      agent: null,
      agents_online: true,
      ...HOURS,
    });
    visitor.send({ type: 'escalate' });
    t.same(await visitor.next('escalated'), { type: 'escalated' }, 'asked again');
    // Settle: anything sent before the answer to this frame has arrived.
    visitor.send({});
    await visitor.next('error');
    t.equal(visitor.frames.filter((f) => f.type === 'handoff').length, 1, 'no second change: still waiting');
    const again = await visit(session);
    t.same(again.ready.handoff, { state: 'waiting', agent: null, agents_online: true, ...HOURS });
  });

  await t.test('the takeover on B cuts the reply streaming on A, then says who joined', async (t) => {
    const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
    openai.behaviour = () => ({ text: words.join(''), pieces: words, pieceIntervalMs: 60 });
    visitor.send({ type: 'message', content: 'Tell me everything' });
    t.same(await visitor.next('typing'), { type: 'typing' }, 'the AI is writing: no name');
    const first = await visitor.next('delta');
    t.same(await command({ type: 'takeover' }), { type: 'ok', ref: (agent.frames.at(-1) as Frame).ref });
    const ended = await visitor.next('stream_end');
    t.same(ended, { type: 'stream_end', stream_id: first.stream_id, reason: 'taken_over' });
    const joined = await visitor.next('handoff');
    t.same(joined, { type: 'handoff', change: 'joined', state: 'agent', agent: MARIA, agents_online: true, ...HOURS });
    t.ok(visitor.frames.indexOf(ended) < visitor.frames.indexOf(joined), 'the stream ends, then Maria joins');
    const request = openai.requests.at(-1)!;
    await until(() => request.abandoned, 'the call on A abandoned');
    visitor.send({});
    await visitor.next('error');
    const after = visitor.frames.slice(visitor.frames.indexOf(ended) + 1);
    t.same(
      after.filter((f) => f.type === 'delta' || f.type === 'message'),
      [],
      'not a word of the cut reply after its end',
    );
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  });

  await t.test("the agent's typing and messages carry their name and initial", async (t) => {
    t.same(await command({ type: 'typing' }), { type: 'ok', ref: (agent.frames.at(-1) as Frame).ref });
    t.same(await visitor.next('typing'), { type: 'typing', agent: MARIA });
    t.same(await command({ type: 'reply', content: 'Hi, Maria here.' }), {
      type: 'ok',
      ref: (agent.frames.at(-1) as Frame).ref,
    });
    const message = await visitor.next('message');
    t.same(message, {
      type: 'message',
      role: 'agent',
      content: 'Hi, Maria here.',
      created_at: message.created_at,
      agent: MARIA,
    });
    const again = await visit(session);
    t.same(again.ready.handoff, { state: 'agent', agent: MARIA, agents_online: true, ...HOURS }, 'restored');
    t.same(again.ready.history.at(-1), {
      role: 'agent',
      content: 'Hi, Maria here.',
      created_at: message.created_at,
      agent: MARIA,
    });
    // Another agent of the owner cannot type in Maria's conversation.
    const omar = await services.agents.create(owner.id, 'Omar Two');
    const other = await WidgetClient.at(`${a.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
    sockets.push(other);
    other.send({ type: 'auth', token: omar.token });
    await other.next('conversations');
    other.send({ type: 'typing', chatbot_id: bot.id, session_id: session, ref: 'o1' });
    t.same(await other.next('error'), {
      type: 'error',
      detail: 'Take over the conversation before replying.',
      ref: 'o1',
    });
  });

  await t.test('the release: Maria left, the AI answers again, and asking again waits again', async (t) => {
    await command({ type: 'release' });
    t.same(await visitor.next('handoff'), {
      type: 'handoff',
      change: 'left',
      state: 'ai',
      agent: MARIA,
      agents_online: true,
      ...HOURS,
    });
    visitor.send({ type: 'message', content: 'Back to you, bot' });
    t.match(await visitor.next('message'), { role: 'assistant', content: 'AI: Back to you, bot' });
    t.same((await visit(session)).ready.handoff, { state: 'ai', agent: null, agents_online: true, ...HOURS });
    visitor.send({ type: 'escalate' });
    t.match(await visitor.next('handoff'), { change: 'escalated', state: 'waiting' });
  });
});
