// A process keeps the recent messages of the conversations it ran turns of, so their next turn reads
// none from Redis; whatever anyone else wrote since (another gateway's turn, an agent's reply, an
// erasure) makes the turn read them again. Each turn's history is checked against the transcript.
import t, { type Test } from 'tap';
import { systemClock } from '../../src/clock.ts';
import { ConversationStore, type StoredMessage } from '../../src/store/conversation-store.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const pending = new PendingEventStore(redis, keys, systemClock, 10_000);
/** Two gateway processes' stores. */
const here = new ConversationStore(redis, keys, systemClock, pending);
const there = new ConversationStore(redis, keys, systemClock, pending);
const chatbotId = '0d4f6a52-8c1b-4e7a-b3d9-5a2e7c1f9b64';
const HISTORY = 3;
const limits = { rateLimit: 100, rateWindowMs: 60_000, leaseMs: 30_000, historySize: HISTORY };

/** LRANGE calls Redis has executed so far (scripts' included). */
async function historyReads(): Promise<number> {
  const info = String(await redis.info('commandstats'));
  return Number(/^cmdstat_lrange:calls=(\d+)/m.exec(info)?.[1] ?? 0);
}

/** Begins a turn, checks its history against the transcript and how many reads it took, ends it. */
async function turn(
  t: Test,
  store: ConversationStore,
  session: string,
  question: string,
  answer: string,
  reads: number,
): Promise<StoredMessage[]> {
  const before = await historyReads();
  const start = await store.beginTurn(chatbotId, session, { content: question, source: 'api' }, limits);
  if (start.kind !== 'started') throw new Error(start.kind);
  t.equal((await historyReads()) - before, reads, `"${question}": ${reads} history reads`);
  const { messages } = await store.transcript(chatbotId, session);
  t.same(start.history, messages.slice(0, -1).slice(-HISTORY), `"${question}": the history Redis has`);
  t.match(await store.endTurn(chatbotId, session, start.token, { role: 'assistant', content: answer }), {
    outcome: 'stored',
  });
  return start.history;
}

t.test("a conversation's next turn in the same process reads no history", async (t) => {
  await turn(t, here, 'api-held', 'q1', 'a1', 0); // new: nothing to read
  await turn(t, here, 'api-held', 'q2', 'a2', 0);
  const history = await turn(t, here, 'api-held', 'q3', 'a3', 0);
  t.same(
    history.map((message) => message.content),
    ['a1', 'q2', 'a2'],
  );
  await turn(t, there, 'api-held', 'q4', 'a4', 1); // another process holds none
});

t.test('what another gateway, an agent or an erasure wrote since is read', async (t) => {
  const session = 'api-written';
  await turn(t, here, session, 'q1', 'a1', 0);
  await turn(t, there, session, 'q2', 'a2', 1);
  await turn(t, here, session, 'q3', 'a3', 1); // the other gateway's turn

  await there.takeOver(chatbotId, session, 'agent-1');
  await there.appendAgentReply(chatbotId, session, 'agent-1', 'a person answers');
  await there.release(chatbotId, session, 'agent-1');
  const afterAgent = await turn(t, here, session, 'q4', 'a4', 1);
  t.equal(afterAgent.at(-1)?.content, 'a person answers');

  // Erased, then begun again elsewhere up to the message count of the history held here (9).
  await redis.del([keys.conversation(chatbotId, session), keys.conversationMessages(chatbotId, session)]);
  for (const n of [1, 2, 3, 4]) await turn(t, there, session, `n${n}`, `b${n}`, 0);
  const unanswered = await there.beginTurn(chatbotId, session, { content: 'n5', source: 'api' }, limits);
  if (unanswered.kind !== 'started') throw new Error(unanswered.kind);
  await there.endTurn(chatbotId, session, unanswered.token, null);
  const afterErasure = await turn(t, here, session, 'n6', 'b6', 1);
  t.same(
    afterErasure.map((message) => message.content),
    ['n4', 'b4', 'n5'],
  );
});

t.test('a reply a takeover discarded is not in the history held', async (t) => {
  const session = 'api-discarded';
  await turn(t, here, session, 'q1', 'a1', 0);
  const start = await here.beginTurn(chatbotId, session, { content: 'q2', source: 'api' }, limits);
  if (start.kind !== 'started') throw new Error(start.kind);
  t.match(await here.endTurn(chatbotId, session, start.token, { role: 'assistant', content: 'cut', discard: true }), {
    outcome: 'discarded',
  });
  const history = await turn(t, here, session, 'q3', 'a3', 0);
  t.same(
    history.map((message) => message.content),
    ['q1', 'a1', 'q2'],
  );
});
