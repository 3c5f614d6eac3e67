import t from 'tap';
import { cliFailure, runCli, runCliJson } from '../../support/cli.ts';
import { startRedis } from '../../support/redis-server.ts';

t.test('channel whatsapp says so when no gateway is running to link it', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { REDIS_URL: redis.url, PATH: process.env.PATH ?? '' };
  const user = await runCliJson(['user', 'create', '--email', 'solo@example.com'], env);
  const bot = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Solo'], env);
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id], env),
    cliFailure('No gateway is running to link WhatsApp: start one (npm start) and try again.'),
  );
  t.match(await runCliJson(['channel', 'whatsapp', '--bot', bot.id, '--status'], env), {
    chatbot_id: bot.id,
    state: 'unlinked',
    reason: 'no gateway was running to link it',
  });
});
