import t from 'tap';
import { WebSocketServer } from 'ws';
import { LinkedDevice } from '../../../src/channels/whatsapp/linked-device.ts';
import { baileysSocketFactory } from '../../../src/channels/whatsapp/socket.ts';
import { systemClock } from '../../../src/clock.ts';
import { createLogger } from '../../../src/logger.ts';
import { connectRedis } from '../../../src/redis/redis-client.ts';
import { RedisKeys } from '../../../src/redis/redis-keys.ts';
import { WhatsAppStore } from '../../../src/channels/whatsapp/whatsapp-store.ts';
import { startRedis } from '../../support/redis-server.ts';

// The real Baileys socket, built by the production factory from the auth state in Redis, against a
// loopback websocket server standing in for WhatsApp's: the server reads the client's first frame and
// hangs up, as an unreachable or refusing WhatsApp would.
t.test("Baileys' socket speaks WhatsApp Web's handshake and the device reconnects after a drop", async (t) => {
  const redis = await startRedis();
  const client = await connectRedis({ url: redis.url }, createLogger('silent'));
  const store = new WhatsAppStore(client, new RedisKeys('sb:'), systemClock);
  const frames: Buffer[] = [];
  const connectedAt: number[] = [];
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  server.on('connection', (socket) => {
    connectedAt.push(Date.now());
    socket.once('message', (data: Buffer) => {
      frames.push(Buffer.from(data));
      socket.close();
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  const chatbotId = crypto.randomUUID();
  await store.requestLink(chatbotId, null);
  const device = new LinkedDevice(chatbotId, {
    store,
    socketFactory: baileysSocketFactory({ waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat` }),
    logger: createLogger('silent'),
    clock: systemClock,
    holder: 'test-process',
    leaseMs: 30_000,
    reconnectFirstMs: 200,
    onMessages: () => {},
  });
  t.teardown(async () => {
    await device.stop();
    server.close();
    await client.close();
    await redis.stop();
  });
  device.start();
  const deadline = Date.now() + 15_000;
  while (connectedAt.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(connectedAt.length >= 3, `connected ${connectedAt.length} times`);
  t.equal(frames[0]!.subarray(0, 2).toString(), 'WA', "the first frame opens with WhatsApp Web's prologue");
  t.ok(connectedAt[1]! - connectedAt[0]! >= 180, 'the first reconnect waits its delay');
  t.ok(connectedAt[2]! - connectedAt[1]! >= 380, 'and the next one twice as long');
  t.match(await store.get(chatbotId), { state: 'linking', reason: null }, 'a dropped connection is not an unlink');
  t.ok(await store.socketRunning(chatbotId), 'this process holds the socket lease meanwhile');
});
