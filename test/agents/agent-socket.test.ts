import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import t from 'tap';
import type { WebSocket } from 'ws';
import { AgentHub } from '../../src/agents/agent-hub.ts';
import { AgentSocket } from '../../src/agents/agent-socket.ts';
import type { ReplySuggester } from '../../src/agents/reply-suggester.ts';
import { createLogger } from '../../src/logger.ts';
import type { AgentPresence } from '../../src/store/agent-presence.ts';
import { fakeOpenAi, type FakeBehaviour } from '../fakes/fake-llm-server.ts';
import { runCli } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { RecordingSink } from '../support/recording-sink.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { until } from '../support/until.ts';
import { WidgetClient, type Frame } from '../support/widget-client.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'AI answer' });
const sink = new RecordingSink();
const gw = await startGateway(
  { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1`, LLM_MAX_RETRIES: '0' },
  { events: sink },
);
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
const ownerA = await scaleAccount(gw.app);
const ownerB = await scaleAccount(gw.app);
const botA = await services.chatbots.create(ownerA.user.id, { name: 'A Bot' });
const botB = await services.chatbots.create(ownerB.user.id, { name: 'B Bot' });
const alice = await services.agents.create(ownerA.user.id, 'Alice');
const adam = await services.agents.create(ownerA.user.id, 'Adam');
const bella = await services.agents.create(ownerB.user.id, 'Bella');

async function agentSocket(token: string) {
  const client = await WidgetClient.at(`${gw.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
  client.send({ type: 'auth', token });
  return client;
}

async function signedIn(token: string) {
  const client = await agentSocket(token);
  assert.deepStrictEqual(await client.next('authenticated'), { type: 'authenticated' });
  const list = await client.next('conversations');
  return { client, list };
}

const visitor = (chatbotId: string, sessionId?: string) =>
  WidgetClient.ready(gw.baseUrl, { chatbot_id: chatbotId, ...(sessionId ? { session_id: sessionId } : {}) });

/** The takeover and release events of a session, in order. */
const holdEvents = (sessionId: string) =>
  sink.forSession(sessionId).filter((e) => ['conversation.taken_over', 'conversation.released'].includes(e.event));

/** The conversation's last stored message. */
async function lastMessage(chatbotId: string, widget: { ready: Frame }) {
  const { messages } = await services.conversations.transcript(chatbotId, String(widget.ready.session_id));
  return messages.at(-1)!;
}

t.test('CLI: agent create shows the token once; list and revoke', async (t) => {
  const created = await runCli(['agent', 'create', '--user', ownerA.user.id, '--name', 'Carol'], cliEnv);
  t.equal(created.code, 0, created.stderr);
  const carol = JSON.parse(created.stdout);
  t.same(Object.keys(carol).sort(), ['id', 'name', 'token']);
  t.match(carol.token, /^ag_[A-Za-z0-9_-]{43}$/);
  const listed = JSON.parse((await runCli(['agent', 'list', '--user', ownerA.user.id], cliEnv)).stdout);
  t.same(
    listed.map((a: any) => [a.name, a.active]),
    [
      ['Carol', true],
      ['Adam', true],
      ['Alice', true],
    ],
  );
  t.notOk(JSON.stringify(listed).includes(carol.token), 'the token is never shown again');
  t.same(Object.keys(listed[0]).sort(), ['active', 'created_at', 'id', 'name']);
  const dup = await runCli(['agent', 'create', '--user', ownerA.user.id, '--name', 'Carol'], cliEnv);
  t.same([dup.code, dup.stderr], [1, 'An agent named Carol already exists.\n']);
  const revoked = await runCli(['agent', 'revoke', '--agent', carol.id], cliEnv);
  t.match(JSON.parse(revoked.stdout), { id: carol.id, name: 'Carol', active: false });
  const client = await agentSocket(carol.token);
  t.same(await client.next('error'), { type: 'error', detail: 'Invalid agent token.' });
  t.equal(await client.whenClosed(), 4401);
  const unknown = await runCli(['agent', 'revoke', '--agent', crypto.randomUUID()], cliEnv);
  t.same([unknown.code, unknown.stderr], [1, 'Agent not found.\n']);
});

t.test('auth failures: error frame and close 4401', async (t) => {
  for (const [frame, detail] of [
    [{ type: 'auth', token: 'ag_nope' }, 'Invalid agent token.'],
    [{ type: 'auth' }, 'Invalid agent token.'],
    [{ type: 'takeover', chatbot_id: botA.id, session_id: 'x' }, 'Authenticate first.'],
    ['garbage', 'Frame must be a JSON object.'],
  ] as const) {
    const client = await WidgetClient.at(`${gw.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
    client.send(frame);
    t.same(await client.next('error'), { type: 'error', detail, ...(detail.startsWith('Frame') ? { ref: null } : {}) });
    t.equal(await client.whenClosed(), 4401, JSON.stringify(frame));
  }
});

/** An agent socket as the route sees it, in memory: the frames sent to it and how it was closed. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly frames: Array<Record<string, unknown>> = [];
  closeCode: number | undefined;
  send(data: string): void {
    this.frames.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(code: number): void {
    this.closeCode = code;
    this.readyState = 3;
    this.emit('close');
  }
}

/**
 * The agent socket route on a simulated clock (10 s to authenticate, presence for 30 s renewed every
 * 10 s), over the gateway's stores; presence records when it was entered and left (ms on the clock).
 */
function simulatedRoute() {
  const clock = new SimulatedClock(Date.now() * 1000);
  const start = clock.nowMicros();
  const presenceCalls: Array<[string, number]> = [];
  const presence = Object.create(services.presence) as AgentPresence;
  presence.enter = async () => void presenceCalls.push(['enter', (clock.nowMicros() - start) / 1000]);
  presence.leave = async () => void presenceCalls.push(['leave', (clock.nowMicros() - start) / 1000]);
  const logger = createLogger('silent');
  const sockets = gw.app.sockets;
  const hub = new AgentHub({ ...services, sockets, logger });
  const route = new AgentSocket({
    ...services,
    // These tests time sign-in and presence; suggestions are test/agents/agent-suggest.test.ts's.
    suggestions: {} as ReplySuggester,
    presence,
    hub,
    sockets,
    clock,
    logger,
    presenceTtlMs: 30_000,
    authTimeoutMs: 10_000,
  });
  const open = async () => {
    const socket = new FakeSocket();
    const accept = await route.admit();
    if (typeof accept !== 'function') throw new Error('refused');
    const receiver = accept(socket as unknown as WebSocket);
    const frame = (frame: object) => receiver.receive(Buffer.from(JSON.stringify(frame)), false);
    return { socket, frame };
  };
  return { clock, presenceCalls, open };
}

t.test('a socket that does not authenticate is refused when authTimeoutMs has passed on the clock', async (t) => {
  const { clock, open } = simulatedRoute();
  const { socket } = await open();
  await clock.advance(9_999);
  t.same(socket.frames, [], 'nothing before the timeout');
  t.equal(socket.closeCode, undefined);
  await clock.advance(1);
  t.same(socket.frames, [{ type: 'error', detail: 'Authentication timed out.' }]);
  t.equal(socket.closeCode, 4401);
  t.equal(clock.pending, 0);

  const closed = await open();
  closed.socket.close(1000);
  t.equal(clock.pending, 0, 'a socket closed first leaves no timer behind');
});

t.test('signed in: no timeout, presence renewed every third of its TTL while open, left at close', async (t) => {
  const { clock, presenceCalls, open } = simulatedRoute();
  const { socket, frame } = await open();
  await clock.advance(5_000);
  await frame({ type: 'auth', token: alice.token });
  t.same(
    socket.frames.map((f) => f.type),
    ['authenticated', 'conversations'],
  );
  t.same(presenceCalls, [['enter', 5_000]]);
  await clock.advance(30_000);
  t.equal(socket.closeCode, undefined, 'authenticated in time: not refused');
  t.same(
    presenceCalls,
    [
      ['enter', 5_000],
      ['enter', 15_000],
      ['enter', 25_000],
      ['enter', 35_000],
    ],
    'renewed every 10 s',
  );
  socket.close(1000);
  t.same(presenceCalls.at(-1), ['leave', 35_000]);
  await clock.advance(30_000);
  t.equal(presenceCalls.length, 5, 'no renewal once closed');
  t.equal(clock.pending, 0);
  t.equal(socket.frames.length, 2);
});

t.test('takeover, visitor messages pushed to the agent, agent reply to the widget, release', async (t) => {
  const { client: agent } = await signedIn(alice.token);
  const { client: widget, ready } = await visitor(botA.id);
  const session = ready.session_id;
  widget.send({ type: 'message', content: 'hello' });
  await widget.next('message');
  t.match(await agent.next('message'), { chatbot_id: botA.id, session_id: session, role: 'user', content: 'hello' });
  t.match(await agent.next('message'), { role: 'assistant', content: 'AI answer', created_at: TIMESTAMP });

  agent.send({ type: 'takeover', chatbot_id: botA.id, session_id: session, ref: 1 });
  t.same(await agent.next('ok'), { type: 'ok', ref: 1 });
  const calls = openai.requests.length;
  widget.send({ type: 'message', content: 'is a person there?' });
  const pushed = await agent.next('message');
  t.match(pushed.created_at, TIMESTAMP);
  t.same(pushed, {
    type: 'message',
    chatbot_id: botA.id,
    session_id: session,
    role: 'user',
    content: 'is a person there?',
    created_at: pushed.created_at,
    chatbot_name: 'A Bot',
    last_activity_at: pushed.created_at,
    lead: null,
  });
  t.equal(openai.requests.length, calls, 'the AI does not answer');
  // The push to the agent comes over Redis pub/sub and may arrive before the turn has handed its event on.
  await until(() => sink.forSession(session).length >= 4, 'the second message.received');
  t.same(
    sink.forSession(session).map((e) => e.event),
    ['conversation.started', 'message.received', 'conversation.taken_over', 'message.received'],
    'message.received still fires',
  );
  const quota = await services.quota.used(ownerA.user.id);
  agent.send({ type: 'reply', chatbot_id: botA.id, session_id: session, content: 'Hi, Alice here.', ref: 'r2' });
  t.same(await agent.next('ok'), { type: 'ok', ref: 'r2' });
  const delivered = await widget.next('message');
  t.match(delivered, { type: 'message', role: 'agent', content: 'Hi, Alice here.', created_at: TIMESTAMP });
  t.same(Object.keys(delivered).sort(), ['agent', 'content', 'created_at', 'role', 'type']);
  t.same(delivered.agent, { name: 'Alice', initial: 'A' }, 'who wrote it, as visitors see them');
  t.match(await agent.next('message'), { role: 'agent', content: 'Hi, Alice here.' });
  t.equal(await services.quota.used(ownerA.user.id), quota, 'agent replies are not counted');

  agent.send({ type: 'release', chatbot_id: botA.id, session_id: session, ref: 3 });
  t.same(await agent.next('ok'), { type: 'ok', ref: 3 });
  widget.send({ type: 'message', content: 'thanks, bye' });
  t.equal((await widget.next('message')).content, 'AI answer', 'the AI answers again after release');
  const prompt = openai.requests.at(-1)!.body.messages;
  t.match(prompt.at(-2), { role: 'assistant', content: 'Hi, Alice here.' }, 'the agent reply is an assistant turn');
  t.same(
    holdEvents(session).map((e) => [e.event, e.data.agent, e.data.channel]),
    [
      ['conversation.taken_over', 'Alice', 'web'],
      ['conversation.released', 'Alice', 'web'],
    ],
    "the agent's takeover and release, by its name",
  );
  const transcript = await services.control.show(botA.id, session);
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'hello'],
      ['assistant', 'AI answer'],
      ['user', 'is a person there?'],
      ['agent', 'Hi, Alice here.'],
      ['user', 'thanks, bye'],
      ['assistant', 'AI answer'],
    ],
  );
  await Promise.all([agent.close(), widget.close()]);
});

t.test('the race: takeover during a slow LLM call; the visitor never gets the AI reply, REST gets ""', async (t) => {
  // Each LLM call answers only when the test lets it: here, once the takeover is done.
  const held: Array<() => void> = [];
  openai.behaviour = () => new Promise<FakeBehaviour>((resolve) => held.push(() => resolve({ text: 'too late' })));
  t.teardown(() => {
    held.forEach((answer) => answer());
    openai.behaviour = () => ({ text: 'AI answer' });
  });
  const { client: agent } = await signedIn(alice.token);
  const { client: widget, ready } = await visitor(botA.id);
  const calls = openai.requests.length;
  widget.send({ type: 'message', content: 'slow question' });
  await widget.next('typing');
  agent.send({ type: 'takeover', chatbot_id: botA.id, session_id: ready.session_id, ref: 'race' });
  t.same(await agent.next('ok'), { type: 'ok', ref: 'race' });
  await until(() => held.length === 1, 'the LLM call');
  t.equal(openai.requests.length, calls + 1, 'the call had started');
  // The widget's reply streams, so the takeover stops the call: the gateway goes away before a word.
  const streamed = openai.requests.at(-1)!;
  await until(() => streamed.abandoned, 'the LLM call abandoned');
  held[0]!();
  await until(() => streamed.streamEnd === 'closed', 'the fake seeing it');
  t.equal(streamed.piecesWritten, 0);
  // Anything sent to the widget before the answer to this frame has arrived by then.
  widget.send({});
  await widget.next('error');
  t.same(
    widget.frames.filter((frame) => (frame.type === 'message' && frame.role === 'assistant') || frame.type === 'delta'),
    [],
    'no AI reply reached the widget',
  );
  t.same(await services.conversations.discarded(botA.id, ready.session_id), [], 'nothing was written to keep aside');
  // The same race through the REST API.
  await services.control.escalate(botA.id, ready.session_id);
  const rest = apiFetch(`${gw.baseUrl}/api/v1/chatbots/${botA.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerA.key}` },
    body: JSON.stringify({ message: 'rest question', session_id: 'api-race' }),
  });
  await until(() => held.length === 2, 'the REST call reaching the LLM');
  t.match(JSON.stringify(openai.requests.at(-1)!.body), /rest question/);
  agent.send({ type: 'takeover', chatbot_id: botA.id, session_id: 'api-race', ref: 'rest' });
  t.same(await agent.next('ok'), { type: 'ok', ref: 'rest' });
  held[1]!();
  const res = await rest;
  t.same([res.status, await res.json()], [200, { response: '' }]);
  await Promise.all([agent.close(), widget.close()]);
});

t.test('two agents cannot hold one conversation; the second is told who holds it', async (t) => {
  const { client: first } = await signedIn(alice.token);
  const { client: second } = await signedIn(adam.token);
  const { client: widget, ready } = await visitor(botA.id);
  widget.send({ type: 'message', content: 'hi' });
  await widget.next('message');
  first.send({ type: 'takeover', chatbot_id: botA.id, session_id: ready.session_id, ref: 1 });
  t.same(await first.next('ok'), { type: 'ok', ref: 1 });
  second.send({ type: 'takeover', chatbot_id: botA.id, session_id: ready.session_id, ref: 7 });
  t.same(await second.next('error'), { type: 'error', detail: 'Conversation is already taken over by Alice.', ref: 7 });
  second.send({ type: 'reply', chatbot_id: botA.id, session_id: ready.session_id, content: 'me too', ref: 8 });
  t.same(await second.next('error'), { type: 'error', detail: 'Conversation is already taken over by Alice.', ref: 8 });
  second.send({ type: 'release', chatbot_id: botA.id, session_id: ready.session_id, ref: 9 });
  t.same(await second.next('error'), { type: 'error', detail: 'Conversation is already taken over by Alice.', ref: 9 });
  first.send({ type: 'release', chatbot_id: botA.id, session_id: ready.session_id, ref: 2 });
  t.same(await first.next('ok'), { type: 'ok', ref: 2 });
  t.same(
    holdEvents(ready.session_id).map((e) => [e.event, e.data.agent]),
    [
      ['conversation.taken_over', 'Alice'],
      ['conversation.released', 'Alice'],
    ],
    'refused commands emit nothing',
  );
  second.send({ type: 'reply', chatbot_id: botA.id, session_id: ready.session_id, content: 'x', ref: 10 });
  t.same(await second.next('error'), {
    type: 'error',
    detail: 'Take over the conversation before replying.',
    ref: 10,
  });
  await Promise.all([first.close(), second.close(), widget.close()]);
});

t.test("isolation: an agent of owner B never sees owner A's conversations or events", async (t) => {
  const { client: widgetA, ready } = await visitor(botA.id);
  widgetA.send({ type: 'message', content: 'secret of A' });
  await widgetA.next('message');
  const { client: agentB, list } = await signedIn(bella.token);
  t.notOk(JSON.stringify(list).includes(botA.id), 'not listed');
  widgetA.send({ type: 'message', content: 'another secret' });
  await widgetA.next('message');
  widgetA.send({ type: 'escalate' });
  await widgetA.next('escalated');
  widgetA.send({ type: 'lead', name: 'Private Person', email: 'private@example.com' });
  await widgetA.next('lead_saved');
  agentB.send({ type: 'takeover', chatbot_id: botA.id, session_id: ready.session_id, ref: 1 });
  t.same(await agentB.next('error'), { type: 'error', detail: 'Chatbot not found.', ref: 1 });
  t.same(
    agentB.frames.map((f) => f.type),
    ['authenticated', 'conversations', 'error'],
    'no message, escalation or lead of A was pushed',
  );
  const res = await fetch(`${gw.baseUrl}/agents/v1/conversations/${botA.id}/${ready.session_id}`, {
    headers: { authorization: `Bearer ${bella.token}` },
  });
  t.same([res.status, await res.json()], [404, { detail: 'Chatbot not found.' }]);
  const { client: widgetB } = await visitor(botB.id);
  widgetB.send({ type: 'message', content: 'for B' });
  t.match(await agentB.next('message'), { chatbot_id: botB.id, content: 'for B' });
  await Promise.all([widgetA.close(), widgetB.close(), agentB.close()]);
});

t.test('sign-in lists live and escalated conversations, newest activity first; escalations are pushed', async (t) => {
  const bot = await services.chatbots.create(ownerB.user.id, { name: 'Listing' });
  const first = await visitor(bot.id);
  first.client.send({ type: 'message', content: 'first' });
  await first.client.next('message');
  const second = await visitor(bot.id);
  second.client.send({ type: 'message', content: 'second' });
  await second.client.next('message');
  const { client: agent, list } = await signedIn(bella.token);
  const mine = list.items.filter((item: any) => item.chatbot_id === bot.id);
  const [secondLast, firstLast] = await Promise.all([lastMessage(bot.id, second), lastMessage(bot.id, first)]);
  t.same(mine, [
    {
      chatbot_id: bot.id,
      session_id: second.ready.session_id,
      source: 'embed',
      escalated_at: null,
      taken_over_by: null,
      last_message: { role: 'assistant', content: 'AI answer', created_at: secondLast.created_at },
      chatbot_name: 'Listing',
      last_activity_at: secondLast.created_at,
      lead: null,
    },
    {
      chatbot_id: bot.id,
      session_id: first.ready.session_id,
      source: 'embed',
      escalated_at: null,
      taken_over_by: null,
      last_message: { role: 'assistant', content: 'AI answer', created_at: firstLast.created_at },
      chatbot_name: 'Listing',
      last_activity_at: firstLast.created_at,
      lead: null,
    },
  ]);
  t.match(firstLast.created_at, TIMESTAMP);
  first.client.send({ type: 'escalate' });
  const pushed = await agent.next('escalated');
  t.match(pushed.escalated_at, TIMESTAMP);
  // An escalation is not activity: the conversation last moved with its AI answer.
  t.same(pushed, {
    type: 'escalated',
    chatbot_id: bot.id,
    session_id: first.ready.session_id,
    escalated_at: pushed.escalated_at,
    chatbot_name: 'Listing',
    last_activity_at: firstLast.created_at,
    lead: null,
  });
  t.same(
    ((await (await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${bot.id}`)).json()) as any).agents_online,
    true,
    'an agent is online while its socket is open',
  );
  await agent.close();
  const offline = await until(
    async () =>
      ((await (await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${bot.id}`)).json()) as any).agents_online ===
      false,
    'agents_online false',
  );
  t.equal(offline, true, 'no agent online once its socket closed');
  await Promise.all([first.client.close(), second.client.close()]);
});

// Issue 20: the console showed raw session ids even after the visitor left their name, and never the chatbot.
t.test(
  'every conversation frame names the chatbot and the visitor who left a lead, also one left meanwhile',
  async (t) => {
    const owner = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(owner.user.id, { name: 'Leads Bot' });
    const frank = await services.agents.create(owner.user.id, 'Frank');
    const ref = (widget: { ready: Frame }) => ({
      chatbot_id: bot.id,
      session_id: String(widget.ready.session_id),
    });

    // Left before the agent signs in: in the listing.
    const known = await visitor(bot.id);
    known.client.send({ type: 'message', content: 'hi' });
    await known.client.next('message');
    known.client.send({ type: 'lead', name: 'Grace Hopper', email: 'grace@example.com' });
    await known.client.next('lead_saved');
    const { client: agent, list } = await signedIn(frank.token);
    const knownLast = await lastMessage(bot.id, known);
    t.same(list, {
      type: 'conversations',
      items: [
        {
          ...ref(known),
          source: 'embed',
          escalated_at: null,
          taken_over_by: null,
          last_message: knownLast,
          chatbot_name: 'Leads Bot',
          last_activity_at: knownLast.created_at,
          lead: { name: 'Grace Hopper', email: 'grace@example.com', phone: '' },
        },
      ],
    });

    // Left while the agent watches: pushed at once, and carried by the pushes after it.
    const fresh = await visitor(bot.id);
    fresh.client.send({ type: 'message', content: 'hello' });
    await fresh.client.next('message');
    const before = await agent.next('message');
    t.same(before, {
      type: 'message',
      ...ref(fresh),
      role: 'user',
      content: 'hello',
      created_at: before.created_at,
      chatbot_name: 'Leads Bot',
      last_activity_at: before.created_at,
      lead: null,
    });
    const answered = await agent.next('message');
    t.equal(answered.content, 'AI answer');
    fresh.client.send({ type: 'lead', email: 'ada@example.com', phone: '+44 20 7946 0000' });
    await fresh.client.next('lead_saved');
    t.same(await agent.next('lead'), {
      type: 'lead',
      ...ref(fresh),
      chatbot_name: 'Leads Bot',
      last_activity_at: answered.created_at,
      lead: { name: '', email: 'ada@example.com', phone: '+44 20 7946 0000' },
    });
    fresh.client.send({ type: 'lead', name: 'Ada Lovelace', email: 'ada@example.com' });
    await fresh.client.next('lead_saved');
    const ada = { name: 'Ada Lovelace', email: 'ada@example.com', phone: '' };
    t.same(await agent.next('lead'), {
      type: 'lead',
      ...ref(fresh),
      chatbot_name: 'Leads Bot',
      last_activity_at: answered.created_at,
      lead: ada,
    });
    // Left before the first message: no conversation to show yet, so nothing is pushed (the push below is
    // later in the same order of signals, so this lead's turn has passed by then).
    const early = await visitor(bot.id);
    early.client.send({ type: 'lead', email: 'early@example.com' });
    await early.client.next('lead_saved');
    fresh.client.send({ type: 'message', content: 'still there?' });
    await fresh.client.next('message');
    const after = await agent.next('message');
    t.same(after, {
      type: 'message',
      ...ref(fresh),
      role: 'user',
      content: 'still there?',
      created_at: after.created_at,
      chatbot_name: 'Leads Bot',
      last_activity_at: after.created_at,
      lead: ada,
    });
    const reply = await agent.next('message');
    fresh.client.send({ type: 'escalate' });
    const escalated = await agent.next('escalated');
    t.same(escalated, {
      type: 'escalated',
      ...ref(fresh),
      escalated_at: escalated.escalated_at,
      chatbot_name: 'Leads Bot',
      last_activity_at: reply.created_at,
      lead: ada,
    });

    t.same(
      agent.frames.filter((frame) => frame.type === 'lead').map((frame) => frame.session_id),
      [ref(fresh).session_id, ref(fresh).session_id],
      'the lead left before its conversation began was not pushed',
    );
    // The first message's push carries it.
    early.client.send({ type: 'message', content: 'first words' });
    const first = await agent.next('message');
    t.same(first, {
      type: 'message',
      ...ref(early),
      role: 'user',
      content: 'first words',
      created_at: first.created_at,
      chatbot_name: 'Leads Bot',
      last_activity_at: first.created_at,
      lead: { name: '', email: 'early@example.com', phone: '' },
    });
    await Promise.all([agent.close(), known.client.close(), fresh.client.close(), early.client.close()]);
  },
);

t.test('the transcript endpoint', async (t) => {
  const { client: widget, ready } = await visitor(botA.id);
  widget.send({ type: 'message', content: 'transcript please' });
  await widget.next('message');
  const url = `${gw.baseUrl}/agents/v1/conversations/${botA.id}/${ready.session_id}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${alice.token}` } });
  t.equal(res.status, 200);
  const body: any = await res.json();
  t.match(body, {
    chatbot_id: botA.id,
    session_id: ready.session_id,
    source: 'embed',
    escalated_at: null,
    taken_over_by: null,
  });
  t.same(
    body.messages.map((m: any) => [m.role, m.content]),
    [
      ['user', 'transcript please'],
      ['assistant', 'AI answer'],
    ],
  );
  for (const headers of [{}, { authorization: 'Bearer ag_wrong' }, { authorization: `Bearer ${ownerA.key}` }]) {
    const refused = await fetch(url, { headers });
    t.same([refused.status, await refused.json()], [401, { detail: 'Invalid agent token.' }]);
  }
  const missing = await fetch(`${gw.baseUrl}/agents/v1/conversations/${botA.id}/embed-nothing`, {
    headers: { authorization: `Bearer ${alice.token}` },
  });
  t.same([missing.status, await missing.json()], [404, { detail: 'Conversation not found.' }]);
  await widget.close();
});

t.test('who a token belongs to: GET /agents/v1/me', async (t) => {
  const res = await fetch(`${gw.baseUrl}/agents/v1/me`, { headers: { authorization: `Bearer ${alice.token}` } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.same(await res.json(), { id: alice.id, name: 'Alice' });
  for (const headers of [{}, { authorization: 'Bearer ag_wrong' }, { authorization: `Basic ${alice.token}` }]) {
    const refused = await fetch(`${gw.baseUrl}/agents/v1/me`, { headers });
    t.same([refused.status, await refused.json()], [401, { detail: 'Invalid agent token.' }]);
  }
});

t.test('the console page and its script', async (t) => {
  const page = await fetch(`${gw.baseUrl}/agents`);
  t.equal(page.status, 200);
  t.same(
    ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy'].map(
      (name) => page.headers.get(name),
    ),
    [
      'text/html; charset=utf-8',
      "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      'no-cache',
      'nosniff',
      'no-referrer',
    ],
  );
  t.match(await page.text(), /<script src="\/agents\/console\.js" defer><\/script>/);
  const script = await fetch(`${gw.baseUrl}/agents/console.js`);
  t.equal(script.status, 200);
  t.equal(script.headers.get('content-type'), 'application/javascript; charset=utf-8');
  t.equal(script.headers.get('cache-control'), 'no-cache');
  const etag = script.headers.get('etag');
  t.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
  const body = await script.text();
  t.ok(body.length > 1000 && body.length < 60_000, `a small bundle (${body.length} bytes)`);
  const again = await fetch(`${gw.baseUrl}/agents/console.js`, { headers: { 'if-none-match': etag! } });
  t.same([again.status, await again.text()], [304, '']);
});

// Issue 18: a revoked agent's open socket kept receiving visitor messages and escalations, and kept
// agents_online true, until its next command.
t.test('revoking an agent (here from the CLI, another process) closes its open sockets at once', async (t) => {
  const ownerC = await scaleAccount(gw.app);
  const botC = await services.chatbots.create(ownerC.user.id, { name: 'C Bot' });
  const dora = await services.agents.create(ownerC.user.id, 'Dora');
  const erin = await services.agents.create(ownerC.user.id, 'Erin');
  const { client: doraSocket } = await signedIn(dora.token);
  const { client: erinSocket } = await signedIn(erin.token);
  t.teardown(() => erinSocket.close());
  t.equal(await until(() => services.presence.anyOnline(ownerC.user.id), 'agents online'), true);

  const revoked = await runCli(['agent', 'revoke', '--agent', dora.id], cliEnv);
  t.equal(revoked.code, 0, revoked.stderr);
  t.same(await doraSocket.next('error'), { type: 'error', detail: 'Invalid agent token.' });
  t.equal(await doraSocket.whenClosed(), 4401);

  // Erin, not revoked, still hears the owner's conversations; Dora's socket is gone.
  const { client: widget } = await visitor(botC.id);
  widget.send({ type: 'message', content: 'anyone there?' });
  t.match(await erinSocket.next('message'), { type: 'message', chatbot_id: botC.id, content: 'anyone there?' });
  t.same(
    doraSocket.frames.filter((frame) => frame.type === 'message'),
    [],
    'nothing reached the revoked agent',
  );
  erinSocket.close();
  await erinSocket.whenClosed();
  const gone = await until(async () => !(await services.presence.anyOnline(ownerC.user.id)), 'agents gone');
  t.equal(gone, true, 'no agent online once both are gone');
  widget.close();
});
