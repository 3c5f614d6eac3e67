import { createClient } from 'redis';
import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { chatCall, startGatewayCluster } from '../support/gateway-cluster.ts';
import { masterIndexOfSlot } from '../support/redis-cluster.ts';
import { scaleOwnerWithBot } from '../support/scale-owner.ts';
import { until } from '../support/until.ts';

const SESSIONS_PER_BOT = 12;
const MESSAGES = 12;
/** Acknowledged calls after which the master is killed: mid-load. */
const KILL_AFTER = 150;

// Three gateways on a Redis Cluster of 3 masters with a replica each, writing with
// REDIS_WAIT_REPLICAS=1; three chatbots whose keys live on three different masters. Visitors chat
// through any gateway, retrying a call that was not answered 200 (as a widget resends), and the
// chatbot's webhook hears of every message. Mid-load the master holding one chatbot is killed with
// kill -9: its replica is promoted, the gateways follow the new topology, and every call that was
// acknowledged is in its transcript, in order, with its message.received delivered.
t.test(
  'a master killed mid-load: its replica takes over; no acknowledged message or queued delivery is lost',
  async (t) => {
    const openai = await fakeOpenAi().start();
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
    const receiver = await new WebhookReceiver().start();
    const cluster = await startGatewayCluster(
      3,
      {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        RATE_LIMIT_PER_MINUTE: '1000000',
        CONVERSATION_RATE_LIMIT: '1000',
        REDIS_WAIT_REPLICAS: '1',
        WEBHOOK_ALLOW_PRIVATE: '1',
        WEBHOOK_RETRY_DELAYS: '1,1,1,1,1,1,1,1',
        WEBHOOK_POLL_MS: '50',
        // What the failover cut off is taken up again sooner than by default: a message's events by
        // another gateway a grace period later (1 s instead of 10), and a delivery whose attempt could
        // not be recorded when its claim lapses (the timeout and 5 s: 6 s instead of 15).
        PENDING_EVENT_GRACE_MS: '1000',
        WEBHOOK_TIMEOUT_MS: '1000',
      },
      'cluster',
    );
    t.teardown(async () => {
      await cluster.stop();
      await receiver.stop();
      await openai.stop();
    });
    const { services } = cluster;
    const redisCluster = cluster.redisCluster!;

    // Chatbots until one sits on each master (a chatbot's keys share the hash tag {b:<id>}).
    const probe = await createClient({ url: redisCluster.urls[0]! }).connect();
    const masters = await redisCluster.masters();
    const masterOf = async (chatbotId: string) => {
      const slot = await probe.sendCommand<number>(['CLUSTER', 'KEYSLOT', `{b:${chatbotId}}`]);
      return masterIndexOfSlot(masters, slot);
    };
    const bots: Array<Awaited<ReturnType<typeof scaleOwnerWithBot>> & { slot: number }> = [];
    for (let i = 0; bots.length < masters.length; i += 1) {
      if (i === 60) throw new Error('no chatbot landed on some master after 60 tries');
      const made = await scaleOwnerWithBot(services, `Failover ${i}`);
      const master = await masterOf(made.bot.id);
      if (bots.some((bot) => bot.slot === master)) continue;
      bots.push({ ...made, slot: master });
      const hook = await services.webhooks.create(made.bot.id, receiver.url, ['message.received']);
      receiver.secrets.push(hook.secret);
    }
    const victim = bots[0]!;
    const victimSlot = await probe.sendCommand<number>(['CLUSTER', 'KEYSLOT', `{b:${victim.bot.id}}`]);
    probe.destroy();

    // The load: every session's calls one after another, each retried until it is answered 200.
    let acknowledged = 0;
    let refused = 0;
    const wrongReplies: string[] = [];
    const refusals = new Map<string, number>();
    let killing: Promise<{ killed: { port: number }; promoted: { port: number } }> | undefined;
    const sessions = bots.flatMap((bot) =>
      Array.from({ length: SESSIONS_PER_BOT }, (_, s) => ({ bot, session: `fo-${s}`, acked: [] as string[] })),
    );
    await Promise.all(
      sessions.map(async (session) => {
        for (let m = 0; m < MESSAGES; m += 1) {
          const message = `${session.session} m${m}`;
          for (let attempt = 0; ; attempt += 1) {
            if (attempt === 200) throw new Error(`${message} was never answered`);
            const result = await chatCall(
              cluster.pick(),
              session.bot.key,
              session.bot.bot.id,
              session.session,
              message,
            );
            if ('status' in result && result.status === 200) {
              if (result.body?.response !== `AI: ${message}`)
                wrongReplies.push(`${message}: ${JSON.stringify(result.body)}`);
              session.acked.push(message);
              acknowledged += 1;
              if (acknowledged === KILL_AFTER) killing = redisCluster.killMasterOf(victimSlot);
              break;
            }
            refused += 1;
            const reason = 'status' in result ? `${result.status} ${JSON.stringify(result.body)}` : result.error;
            refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      }),
    );
    t.ok(killing, 'the master was killed mid-load');
    const { killed, promoted } = await killing!;
    t.not(promoted.port, killed.port, `the replica on ${promoted.port} took over from the master on ${killed.port}`);
    t.comment(
      `${acknowledged} calls acknowledged, ${refused} refused while the cluster failed over: ${JSON.stringify([...refusals])}`,
    );
    t.equal(acknowledged, sessions.length * MESSAGES, 'every call was eventually answered');
    t.same(wrongReplies, [], 'each with its own reply');

    // Every acknowledged call is in its transcript, in order, with its reply after it. A call refused
    // after its message was stored leaves that message stored without a reply: the retry that was
    // acknowledged stores it again, with the reply.
    const lost: string[] = [];
    let unanswered = 0;
    for (const session of sessions) {
      const transcript = await services.conversations.transcript(session.bot.bot.id, session.session);
      const entries = transcript.messages.map((message) => `${message.role}:${message.content}`);
      let at = 0;
      for (const message of session.acked) {
        const reply = entries.indexOf(`assistant:AI: ${message}`, at);
        if (reply === -1 || entries[reply - 1] !== `user:${message}`) {
          lost.push(`${session.bot.bot.name} ${message}`);
          continue;
        }
        unanswered += entries.slice(at, reply - 1).filter((entry) => entry === `user:${message}`).length;
        at = reply + 1;
      }
    }
    t.same(lost, [], 'no acknowledged message is missing from its transcript or out of order');
    t.comment(`${unanswered} visitor messages stored by calls that were refused, then stored again by their retry`);

    // Every stored visitor message's message.received reaches the receiver.
    const stored = new Set<string>();
    for (const session of sessions) {
      const transcript = await services.conversations.transcript(session.bot.bot.id, session.session);
      for (const message of transcript.messages)
        if (message.role === 'user') stored.add(`${session.bot.bot.id} ${message.content}`);
    }
    const heard = () =>
      new Set(
        receiver.received
          .filter((request) => request.body?.event === 'message.received')
          .map((request) => `${request.body.chatbot_id} ${request.body.data.content}`),
      );
    await until(() => [...stored].every((entry) => heard().has(entry)), 'a delivery of every stored message', 60_000);
    t.pass(`${stored.size} stored visitor messages, each delivered`);
  },
);
