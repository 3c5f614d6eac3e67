import { BufferJSON, proto } from '@whiskeysockets/baileys';
import t from 'tap';
import { redisAuthState } from '../../../src/channels/whatsapp/auth-state.ts';
import { systemClock } from '../../../src/clock.ts';
import { createLogger } from '../../../src/logger.ts';
import { connectRedis } from '../../../src/redis/redis-client.ts';
import { RedisKeys } from '../../../src/redis/redis-keys.ts';
import { WhatsAppStore } from '../../../src/channels/whatsapp/whatsapp-store.ts';
import { startRedis } from '../../support/redis-server.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const keys = new RedisKeys('sb:');

/** A store on a connection of its own, as a gateway process has. */
async function open() {
  const client = await connectRedis({ url: redis.url }, createLogger('silent'));
  return { store: new WhatsAppStore(client, keys, systemClock), close: () => client.close() };
}

t.test('creds and every kind of signal key survive a restart byte for byte', async (t) => {
  const chatbotId = crypto.randomUUID();
  const first = await open();
  await first.store.requestLink(chatbotId, null);
  t.ok(await first.store.holdSocket(chatbotId, 'process-1', 60_000));
  const { state, saveCreds } = await redisAuthState(first.store, chatbotId, 'process-1');
  t.equal(state.creds.registered, false, 'fresh creds before anything was saved');
  state.creds.me = { id: '4915112345678:4@s.whatsapp.net', name: 'Shop' };
  state.creds.registered = true;
  await saveCreds();
  const preKey = { public: new Uint8Array([1, 2, 3]), private: Buffer.from([4, 5, 6]) };
  const session = Buffer.from('session-record-bytes');
  const syncKey = proto.Message.AppStateSyncKeyData.fromObject({
    keyData: Buffer.from([9, 9, 9]),
    timestamp: 1700000000,
  });
  await state.keys.set({
    'pre-key': { '1': preKey, '2': preKey },
    session: { '4915112345678.0': session },
    'app-state-sync-key': { AAAA: syncKey },
    'sender-key-memory': { 'group@g.us': { '4915112345678:4@s.whatsapp.net': true } },
    'lid-mapping': { '4915112345678': '99887766554433' },
  });
  await state.keys.set({ 'pre-key': { '2': null } });
  const expectedCreds = JSON.stringify(state.creds, BufferJSON.replacer);
  await first.close();

  const second = await open();
  t.teardown(() => second.close());
  const restarted = await redisAuthState(second.store, chatbotId, 'process-1');
  t.equal(JSON.stringify(restarted.state.creds, BufferJSON.replacer), expectedCreds, 'identical creds');
  t.ok(Buffer.isBuffer(restarted.state.creds.noiseKey.private), 'buffers come back as buffers');
  const preKeys = await restarted.state.keys.get('pre-key', ['1', '2']);
  t.same(Object.keys(preKeys), ['1'], 'a deleted key is gone');
  t.same(Buffer.from(preKeys['1']!.public), Buffer.from([1, 2, 3]));
  t.same(Buffer.from(preKeys['1']!.private), Buffer.from([4, 5, 6]));
  const sessions = await restarted.state.keys.get('session', ['4915112345678.0', 'unknown.0']);
  t.same(Object.keys(sessions), ['4915112345678.0']);
  t.ok(Buffer.from(sessions['4915112345678.0']!).equals(session));
  const sync = (await restarted.state.keys.get('app-state-sync-key', ['AAAA'])).AAAA!;
  t.ok(sync instanceof proto.Message.AppStateSyncKeyData, 'app-state sync keys come back as protobuf objects');
  t.same(Buffer.from(sync.keyData!), Buffer.from([9, 9, 9]));
  t.same(await restarted.state.keys.get('sender-key-memory', ['group@g.us']), {
    'group@g.us': { '4915112345678:4@s.whatsapp.net': true },
  });
  t.same(await restarted.state.keys.get('lid-mapping', ['4915112345678']), { '4915112345678': '99887766554433' });

  const raw = await second.store.readKeys(chatbotId, ['pre-key-1', 'session-4915112345678.0']);
  t.same(JSON.parse(raw[0]!, BufferJSON.reviver), preKey, 'stored as BufferJSON, one hash field per key');
});

t.test('auth state of one chatbot never shows in another', async (t) => {
  const a = crypto.randomUUID();
  const b = crypto.randomUUID();
  const { store, close } = await open();
  t.teardown(close);
  for (const chatbotId of [a, b]) {
    await store.requestLink(chatbotId, null);
    await store.holdSocket(chatbotId, 'process-1', 60_000);
  }
  const stateA = await redisAuthState(store, a, 'process-1');
  await stateA.state.keys.set({ session: { 'x.0': Buffer.from('secret') } });
  await stateA.saveCreds();
  const stateB = await redisAuthState(store, b, 'process-1');
  t.same(await stateB.state.keys.get('session', ['x.0']), {});
  t.equal(stateB.state.creds.registered, false);
  t.not(stateB.state.creds.noiseKey.private.toString(), stateA.state.creds.noiseKey.private.toString());
});

t.test('only the socket lease holder writes, and only while the connection exists', async (t) => {
  const chatbotId = crypto.randomUUID();
  const { store, close } = await open();
  t.teardown(close);
  await store.requestLink(chatbotId, null);
  await store.holdSocket(chatbotId, 'holder', 60_000);
  const stale = await redisAuthState(store, chatbotId, 'former-holder');
  await t.rejects(stale.saveCreds(), { name: 'AuthWriteRefusedError' });
  await t.rejects(Promise.resolve(stale.state.keys.set({ session: { 'x.0': Buffer.from('late') } })), {
    name: 'AuthWriteRefusedError',
  });
  const current = await redisAuthState(store, chatbotId, 'holder');
  await current.saveCreds();
  t.not(await store.readCreds(chatbotId), null, 'the holder writes');
  await store.disconnect(chatbotId);
  await t.rejects(current.saveCreds(), { name: 'AuthWriteRefusedError' }, 'a late write after a disconnect');
  t.equal(await store.readCreds(chatbotId), null, 'nothing came back');
  t.same(await store.readKeys(chatbotId, ['session-x.0']), [null]);
});
