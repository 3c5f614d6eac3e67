import { spawn } from 'node:child_process';
import path from 'node:path';
import { createClient } from 'redis';
import t from 'tap';
import { fakeOpenAi } from '../../fakes/fake-llm-server.ts';
import { FakeWhatsApp, textMessage, type FakeWhatsAppSocket } from '../../fakes/fake-whatsapp.ts';
import { cliFailure, runCli, runCliJson } from '../../support/cli.ts';
import { scaleAccount, startGateway } from '../../support/gateway.ts';
import { until } from '../../support/until.ts';
import { RecordingSink } from '../../support/recording-sink.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
const whatsapp = new FakeWhatsApp();
const sink = new RecordingSink();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    WHATSAPP_SOCKET_LEASE_MS: '600',
  },
  { events: sink, whatsappSockets: whatsapp.factory, whatsappReconnectMs: 50 },
);
// Reads what only Redis shows (which messages were taken in, who holds a lease), on a connection of its own.
const redis = await createClient({ url: gw.redis.url }).connect();
t.teardown(async () => {
  redis.destroy();
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const owner = await scaleAccount(gw.app);
const BIN = path.resolve(import.meta.dirname, '../../../bin/switchboard.js');
const VISITOR = '4915112345678@s.whatsapp.net';

/** Starts `channel whatsapp` and lets the test read its stderr while it waits for the phone. */
function startLinking(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'channel', 'whatsapp', ...args], {
    env: cliEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  child.stdout.on('data', (chunk) => (run.stdout += chunk));
  child.stderr.on('data', (chunk) => (run.stderr += chunk));
  const exited = new Promise<void>((resolve) =>
    child.on('close', (code) => {
      run.code = code;
      resolve();
    }),
  );
  return { run, exited };
}

let devices = 0;

/**
 * A chatbot whose WhatsApp is linked (through the service layer the CLI calls) and its open socket;
 * each linked device has a number of its own (`me`).
 */
async function linked(name: string): Promise<{ botId: string; socket: FakeWhatsAppSocket; me: string }> {
  const bot = await services.chatbots.create(owner.user.id, { name });
  const before = whatsapp.sockets.length;
  await services.whatsapp.requestLink(bot.id, null);
  await services.signals.publish({ kind: 'channel', chatbot_id: bot.id, channel: 'whatsapp' });
  const socket = await whatsapp.socket(before);
  const me = `49300000${String((devices += 1)).padStart(2, '0')}:7@s.whatsapp.net`;
  socket.open(me);
  await until(async () => (await services.whatsapp.get(bot.id)).state === 'linked', 'linked');
  return { botId: bot.id, socket, me };
}

const texts = (socket: FakeWhatsAppSocket) => socket.sent.map((m) => [m.jid, m.text]);

/**
 * Resolves once the chatbot's socket lease has been renewed `count` more times (its expiry moves back
 * up): the holder renews it every third of its lifetime, and at each renewal a device without a socket
 * connects again unless it must not.
 */
async function leaseRenewals(botId: string, count: number): Promise<void> {
  const lease = services.keys.whatsappSocket(botId);
  let last = await redis.pTTL(lease);
  let renewals = 0;
  await until(async () => {
    const ttl = await redis.pTTL(lease);
    if (ttl > last) renewals += 1;
    last = ttl;
    return renewals >= count;
  }, `${count} renewals of the socket lease`);
}

t.test('channel whatsapp: links by QR code through the gateway and reports the state', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Linker' });
  const before = whatsapp.sockets.length;
  const { run, exited } = startLinking(['--bot', bot.id]);
  const socket = await whatsapp.socket(before);
  socket.showQr('2@scan-me-please,abc,def');
  await until(() => run.stderr.includes('Scan with the phone'), 'the QR code on stderr');
  t.match(run.stderr, /[█▀▄]/, 'the QR code is drawn in the terminal');
  t.equal((await services.whatsapp.get(bot.id)).qr, '2@scan-me-please,abc,def');
  // WhatsApp asks for a restart right after the scan; the channel reconnects with the saved creds.
  socket.auth.creds.me = { id: '4930000001:12@s.whatsapp.net', name: '~' };
  socket.emitter.emit('creds.update', { me: socket.auth.creds.me });
  socket.close(515, 'restart required');
  const second = await whatsapp.socket(before + 1);
  t.same(second.auth.creds.me, { id: '4930000001:12@s.whatsapp.net', name: '~' }, 'creds came back from Redis');
  second.open('4930000001:12@s.whatsapp.net');
  await exited;
  t.equal(run.code, 0, 'the command exits 0');
  const printed = JSON.parse(run.stdout);
  t.same(printed, {
    chatbot_id: bot.id,
    state: 'linked',
    phone: null,
    jid: '4930000001@s.whatsapp.net',
    qr: null,
    pairing_code: null,
    reason: null,
    updated_at: printed.updated_at,
  });
  t.match(printed.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  t.same(await runCliJson(['channel', 'whatsapp', '--bot', bot.id, '--status'], cliEnv), printed);
  t.same(
    await runCliJson(['channel', 'whatsapp', '--bot', bot.id], cliEnv),
    printed,
    'a linked chatbot is reported, not linked again',
  );
  t.equal(whatsapp.sockets.length, before + 2);
});

t.test('channel whatsapp --phone: a pairing code instead of a QR code', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Pairer' });
  const before = whatsapp.sockets.length;
  const { run, exited } = startLinking(['--bot', bot.id, '--phone', '+49 151 0000-0001']);
  const socket = await whatsapp.socket(before);
  socket.showQr('2@ignored-when-pairing');
  await until(() => run.stderr.includes('Pairing code'), 'the pairing code on stderr');
  t.same(socket.pairingRequests, ['4915100000001']);
  t.match(run.stderr, 'Pairing code for +4915100000001: ABCD-2345\n');
  t.notMatch(run.stderr, /Scan with the phone/);
  // The device takes each QR code as the socket emits it: a pairing code is asked for (or not) before
  // showQr returns.
  socket.showQr('2@second-ref');
  t.same(socket.pairingRequests, ['4915100000001'], 'the code is asked for once');
  socket.open('4915100000001:3@s.whatsapp.net');
  await exited;
  t.equal(run.code, 0, 'the command exits 0');
  t.match(JSON.parse(run.stdout), { state: 'linked', phone: '4915100000001', jid: '4915100000001@s.whatsapp.net' });
});

t.test('channel whatsapp refuses bad input', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Refuser' });
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id, '--phone', '12ab'], cliEnv),
    cliFailure('phone must be the number with its country code, like +49 151 12345678.'),
  );
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id, '--status'], cliEnv),
    cliFailure('WhatsApp is not connected for this chatbot.'),
  );
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id, '--disconnect'], cliEnv),
    cliFailure('WhatsApp is not connected for this chatbot.'),
  );
  t.same(await runCli(['channel', 'whatsapp', '--bot', crypto.randomUUID()], cliEnv), cliFailure('Chatbot not found.'));
});

t.test('a visitor writes: the AI answers with typing shown, events carry the whatsapp source', async (t) => {
  const { botId, socket } = await linked('Replier');
  socket.receive([textMessage(VISITOR, 'Hello there')]);
  await until(() => socket.sent.length === 1, 'the reply');
  t.same(texts(socket), [[VISITOR, 'AI: Hello there']]);
  t.same(socket.presence, [{ type: 'composing', jid: VISITOR }]);
  const sessionId = `wa_${VISITOR}`;
  const events = sink.forSession(sessionId);
  t.same(
    events.map((e) => [e.event, e.data.source]),
    [
      ['conversation.started', 'whatsapp'],
      ['message.received', 'whatsapp'],
    ],
  );
  const shown = await services.control.show(botId, sessionId);
  t.same(
    shown.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'Hello there'],
      ['assistant', 'AI: Hello there'],
    ],
  );
  t.equal(shown.source, 'whatsapp');
  // Our own message comes back as an `append` upsert: never taken for the owner writing.
  t.equal((await services.conversations.get(botId, sessionId)).taken_over_by, null);
});

t.test('messages are taken in once and in order per chat', async (t) => {
  const { botId, socket } = await linked('Orderly');
  const slow = openai.behaviour;
  openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}`, delayMs: 50 });
  t.teardown(() => (openai.behaviour = slow));
  const duplicate = textMessage(VISITOR, 'one', { id: 'SAME1' });
  socket.receive([duplicate, textMessage(VISITOR, 'two'), duplicate]);
  socket.receive([duplicate, textMessage(VISITOR, 'three')]);
  // A chat's messages are taken in (or dropped as seen) one after another, each handed to the
  // conversation, whose turns run in that order. 'three' came last: once it is answered, every message
  // taken in before it has had its turn, and nothing more can come.
  await until(() => texts(socket).some(([, text]) => text === 'AI: three'), 'the reply to the last message');
  t.same(texts(socket), [
    [VISITOR, 'AI: one'],
    [VISITOR, 'AI: two'],
    [VISITOR, 'AI: three'],
  ]);
  const shown = await services.control.show(botId, `wa_${VISITOR}`);
  t.same(
    shown.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['one', 'two', 'three'],
    'each message was taken in once',
  );
});

t.test('groups, status updates, newsletters, history and protocol messages are ignored', async (t) => {
  const { botId, socket } = await linked('Filter');
  const ignored = [
    textMessage('120363000000000000@g.us', 'group chat'),
    textMessage('status@broadcast', 'my status'),
    textMessage('120363111111111111@newsletter', 'news'),
    textMessage('1234567890@broadcast', 'broadcast list'),
    { key: { id: 'P1', remoteJid: VISITOR, fromMe: false }, message: { protocolMessage: { type: 0 } } },
    { key: { id: 'R1', remoteJid: VISITOR, fromMe: false }, message: { reactionMessage: { text: '👍' } } },
    { key: { id: 'S1', remoteJid: VISITOR, fromMe: false }, messageStubType: 1 },
    { key: { id: 'E1', remoteJid: VISITOR, fromMe: false } },
  ];
  socket.receive(ignored);
  const history = textMessage(VISITOR, 'old message from history');
  socket.receive([history], 'append');
  const owners = textMessage(VISITOR, 'owner talking to a friend', { fromMe: true });
  socket.receive([owners]);
  // Then a photo from the visitor. A chat's messages are handled one after another: once the photo is
  // answered, the owner's message before it has been (it found no conversation to take over). And a
  // message taken in, in any chat, is first remembered by its id, in the order the messages came, on
  // one Redis connection: had any of the others been taken in, its id was remembered before the photo's.
  const photo = { key: { id: 'IMG2', remoteJid: VISITOR, fromMe: false }, message: { imageMessage: {} } };
  socket.receive([photo]);
  await until(() => socket.sent.length === 1, 'the notice for the photo');
  t.same(texts(socket), [[VISITOR, 'Sorry, I can only read text messages.']]);
  const taken: string[] = [];
  for (const { key } of [...ignored, history, owners, photo]) {
    if (await redis.exists(services.keys.whatsappMessage(botId, key!.id!))) taken.push(key!.id!);
  }
  t.same(taken, [owners.key!.id, 'IMG2'], 'only the owner message and the photo were taken in');
  t.same(await services.conversations.recent(botId, 10), [], 'no conversation was made');
});

t.test('a photo gets the text-only notice; a contact addressed by LID keeps its phone-number session', async (t) => {
  const { botId, socket } = await linked('Photos');
  socket.receive([{ key: { id: 'IMG1', remoteJid: VISITOR, fromMe: false }, message: { imageMessage: {} } }]);
  await until(() => socket.sent.length === 1, 'the notice');
  t.same(texts(socket), [[VISITOR, 'Sorry, I can only read text messages.']]);
  socket.receive([textMessage('99887766554433@lid', 'via lid', { remoteJidAlt: VISITOR })]);
  await until(() => socket.sent.length === 2, 'the reply');
  t.same(socket.sent[1]!.jid, VISITOR);
  t.ok(await services.conversations.exists(botId, `wa_${VISITOR}`));
  socket.receive([textMessage('11223344556677@lid', 'lid only')]);
  await until(() => socket.sent.length === 3, 'the reply to a LID-only chat');
  t.same(texts(socket)[2], ['11223344556677@lid', 'AI: lid only']);
});

t.test('the owner answering from the phone takes the conversation over until it is released', async (t) => {
  const { botId, socket } = await linked('Owner');
  const sessionId = `wa_${VISITOR}`;
  const slow = openai.behaviour;
  let release: () => void = () => {};
  openai.behaviour = (req) =>
    new Promise((resolve) => {
      release = () => resolve({ text: `AI: ${req.body.messages.at(-1).content}` });
    });
  t.teardown(() => (openai.behaviour = slow));
  socket.receive([textMessage(VISITOR, 'Is the shop open?')]);
  await until(() => openai.requests.some((r) => r.body.messages.at(-1).content === 'Is the shop open?'), 'LLM call');
  socket.receive([textMessage(VISITOR, 'Yes, until 6pm!', { fromMe: true })]);
  await until(
    async () => (await services.conversations.get(botId, sessionId)).taken_over_by === 'owner',
    'the takeover',
  );
  release();
  await until(async () => (await services.conversations.discarded(botId, sessionId)).length === 1, 'discard');
  socket.receive([textMessage(VISITOR, 'Great, thanks')]);
  // Its turn stores it under the conversation's lease, and gives the lease back once it has ended:
  // silent while the owner holds the conversation, or with the AI's reply stored (and then sent).
  const lease = services.keys.conversationLease(botId, sessionId);
  await until(
    async () =>
      (await services.control.show(botId, sessionId)).messages.length >= 3 && (await redis.exists(lease)) === 0,
    'its turn stored and ended',
  );
  t.same(socket.sent, [], 'the AI never talked over the owner');
  t.same(
    (await services.control.show(botId, sessionId)).messages.map((m) => [m.role, m.content]),
    [
      ['user', 'Is the shop open?'],
      ['agent', 'Yes, until 6pm!'],
      ['user', 'Great, thanks'],
    ],
  );
  openai.behaviour = slow;
  const released = await runCliJson(['conversation', 'release', '--bot', botId, '--session', sessionId], cliEnv);
  t.equal(released.taken_over_by, null);
  socket.receive([textMessage(VISITOR, 'One more question')]);
  await until(() => socket.sent.length === 2, 'the AI again');
  t.same(texts(socket), [
    [VISITOR, 'owner left the conversation. The assistant is back.'],
    [VISITOR, 'AI: One more question'],
  ]);
});

t.test("an agent's reply reaches the WhatsApp chat; escalation carries channel whatsapp", async (t) => {
  const { botId, socket } = await linked('Agents');
  const sessionId = `wa_${VISITOR}`;
  socket.receive([textMessage(VISITOR, 'I want to talk to a human please')]);
  await until(() => sink.forSession(sessionId).some((e) => e.event === 'conversation.escalated'), 'escalation');
  const escalated = sink.forSession(sessionId).find((e) => e.event === 'conversation.escalated')!;
  t.same(Object.keys(escalated.data).sort(), ['channel', 'conversation_id', 'escalated_at', 'session_id']);
  t.equal(escalated.data.channel, 'whatsapp');
  await until(() => socket.sent.length === 2, 'the AI keeps answering, after saying a person was asked');
  t.same(texts(socket), [
    [VISITOR, "We've asked a person to join. Nobody is available right now; they will reply here as soon as they can."],
    [VISITOR, 'AI: I want to talk to a human please'],
  ]);
  await services.control.takeOver(botId, sessionId, 'Alice');
  await services.control.reply(botId, sessionId, 'Alice', 'Hi, Alice here. How can I help?');
  await until(() => socket.sent.length === 4, 'the agent reply');
  t.same(texts(socket).slice(2), [
    [VISITOR, 'Alice joined the conversation.'],
    [VISITOR, 'Hi, Alice here. How can I help?'],
  ]);
});

t.test('paused chatbots and the monthly quota answer with a notice, without the AI', async (t) => {
  const { botId, socket } = await linked('Notices');
  await services.chatbots.setActive(botId, false);
  const calls = openai.requests.length;
  socket.receive([textMessage(VISITOR, 'anyone?')]);
  await until(() => socket.sent.length === 1, 'the paused notice');
  t.same(texts(socket), [[VISITOR, 'Chatbot is paused.']]);
  await services.chatbots.setActive(botId, true);
  const free = await services.accounts.create(`free-${crypto.randomUUID()}@example.com`, 'free');
  const freeBot = await services.chatbots.create(free.id, { name: 'Free' });
  for (let i = 0; i < 100; i += 1) await services.quota.consume(free.id);
  await services.whatsapp.requestLink(freeBot.id, null);
  await services.signals.publish({ kind: 'channel', chatbot_id: freeBot.id, channel: 'whatsapp' });
  const freeSocket = await whatsapp.socket(whatsapp.sockets.indexOf(socket) + 1);
  freeSocket.open('4930000009:1@s.whatsapp.net');
  await until(async () => (await services.whatsapp.get(freeBot.id)).state === 'linked', 'linked');
  freeSocket.receive([textMessage(VISITOR, 'over quota')]);
  await until(() => freeSocket.sent.length === 1, 'the quota notice');
  t.same(texts(freeSocket), [[VISITOR, 'Monthly message limit reached.']]);
  t.equal(openai.requests.length, calls, 'no LLM call');
});

t.test('a dropped connection reconnects; a logout from the phone leaves the chatbot unlinked', async (t) => {
  const { botId, socket, me } = await linked('Dropper');
  const index = whatsapp.sockets.indexOf(socket);
  socket.close(428, 'Connection Closed');
  const again = await whatsapp.socket(index + 1);
  t.same(again.auth.creds.me, { id: me, name: 'Owner' }, 'same device, no relinking');
  again.open(me);
  again.receive([textMessage(VISITOR, 'back again')]);
  await until(() => again.sent.length === 1, 'the reply on the new socket');
  again.close(401, 'logged out');
  await until(async () => (await services.whatsapp.get(botId)).state === 'unlinked', 'unlinked');
  const status = await runCliJson(['channel', 'whatsapp', '--bot', botId, '--status'], cliEnv);
  t.match(status, { state: 'unlinked', reason: 'logged out from the phone', jid: me.replace(':7', '') });
  t.equal(await services.whatsapp.readCreds(botId), null, 'the auth state is forgotten');
  // The device keeps its lease, and without a socket it connects again at each renewal unless the
  // chatbot is unlinked: two renewals after the unlink, the first one's attempt has long been made.
  await leaseRenewals(botId, 2);
  t.equal(whatsapp.sockets.length, index + 2, 'no reconnect after a logout');
});

t.test('replies wait for a reconnecting socket: the AI answer and an agent reply arrive once it opens', async (t) => {
  // Another chatbot's open socket, to see when the pushes published before one to it have been handled.
  const witness = await linked('Witness');
  const { botId, socket, me } = await linked('Reconnecting');
  const index = whatsapp.sockets.indexOf(socket);
  const sessionId = `wa_${VISITOR}`;
  const before = openai.behaviour;
  t.teardown(() => void (openai.behaviour = before));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  let asked = false;
  openai.behaviour = async (req) => {
    asked = true;
    await answered;
    return { text: `AI: ${req.body.messages.at(-1).content}` };
  };
  socket.receive([textMessage(VISITOR, 'are you there?')]);
  await until(() => asked, 'the LLM is asked');
  socket.close(428, 'Connection Closed');
  const again = await whatsapp.socket(index + 1);
  answer();
  const transcript = async () => (await services.control.show(botId, sessionId)).messages.map((m) => m.role);
  await until(async () => (await transcript()).includes('assistant'), 'the AI answer is stored');
  await services.control.takeOver(botId, sessionId, 'Alice');
  await services.control.reply(botId, sessionId, 'Alice', 'Alice here, sorry for the wait.');
  // The AI answer was handed to the channel as it was stored. Alice's pushes come as signals, which
  // reach the gateway in the order they were published; each is handed to the channel as it arrives,
  // sent at once on an open socket, else held until the socket opens. So once a push published after
  // hers is on the witness's socket, all three are held here, or were sent (which the check would see).
  await services.visitors.deliver(witness.botId, sessionId, { type: 'notice', content: 'after Alice' });
  await until(() => witness.socket.sent.length === 1, 'a push published after hers');
  t.same([socket.sent.length, again.sent.length], [0, 0], 'nothing is sent while the socket is closed');
  again.open(me);
  await until(() => again.sent.length === 3, 'both replies after the reconnect');
  t.same(texts(again), [
    [VISITOR, 'AI: are you there?'],
    [VISITOR, 'Alice joined the conversation.'],
    [VISITOR, 'Alice here, sorry for the wait.'],
  ]);
  t.same(socket.sent, [], 'the closed socket sent nothing');
});

t.test('channel whatsapp --disconnect logs the device out and forgets it', async (t) => {
  const { botId, socket } = await linked('Leaver');
  t.same(await runCliJson(['channel', 'whatsapp', '--bot', botId, '--disconnect'], cliEnv), {
    chatbot_id: botId,
    disconnected: true,
  });
  await until(() => socket.loggedOut, 'the logout');
  t.equal(await services.whatsapp.find(botId), undefined);
  t.equal(await services.whatsapp.socketRunning(botId), false, 'the lease is let go');
});

t.test('deleting a chatbot logs its WhatsApp device out first', async (t) => {
  const { botId, socket } = await linked('Doomed');
  t.same(await runCliJson(['bot', 'delete', '--bot', botId], cliEnv), { id: botId, deleted: true });
  await until(() => socket.loggedOut, 'the logout');
  t.equal(await services.whatsapp.find(botId), undefined);
  t.same(await runCli(['channel', 'whatsapp', '--bot', botId, '--status'], cliEnv), cliFailure('Chatbot not found.'));
});

t.test('one gateway at a time runs a socket; another takes over when it stops', async (t) => {
  const { botId, socket, me } = await linked('Shared');
  const lease = services.keys.whatsappSocket(botId);
  const holder = await redis.get(lease);
  const other = new FakeWhatsApp();
  const second = await startGateway(
    {
      REDIS_URL: gw.redis.url,
      WHATSAPP_SOCKET_LEASE_MS: '600',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
    },
    { whatsappSockets: other.factory, whatsappReconnectMs: 50 },
  );
  t.teardown(() => second.stop());
  // The second gateway's channel starts a device per linked chatbot as it starts, each asking for its
  // lease at once; the gateway's later start-up writes go out after those asks, on the same Redis
  // connection, so each device has its answer by the time startGateway returns. Refused, it makes no
  // socket, and asks again only at its next renewal, refused the same while the first one renews.
  t.equal(await redis.get(lease), holder, 'the first gateway keeps the lease');
  t.equal(other.sockets.length, 0, 'the second gateway waits while the first holds the socket');
  // The first gateway's channel stops (as at shutdown): its socket closes and its lease is let go.
  await gw.app.whatsapp.stop();
  // The second gateway takes over every chatbot the first ran; this one's device is among them.
  const taken = await until(
    () => other.sockets.find((candidate) => candidate.auth.creds.me?.id === me),
    "the second gateway's socket for the device",
  );
  t.same(taken.auth.creds.me, { id: me, name: 'Owner' }, 'the device moved with Redis');
  t.ok(socket.ended, 'the first socket was closed');
});
