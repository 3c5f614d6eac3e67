import t from 'tap';
import { startGateway } from '../support/gateway.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { fullConversation } from '../support/full-conversation.ts';

// `bot configure --retention-days / --lead-retention-days` and `conversation delete` (an erasure request).
const gw = await startGateway();
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);
const { services } = gw.app;
const owner = await services.accounts.create('cli-retention@example.com', 'scale');
const bot = await services.chatbots.create(owner.id, { name: 'Retention' });

t.test('bot configure sets and clears the retention; bad values are one line', async (t) => {
  const set = await ok(['bot', 'configure', '--bot', bot.id, '--retention-days', '30', '--lead-retention-days', '365']);
  t.same(set.retention, { conversations_days: 30, leads_days: 365 });
  t.same(Object.keys(set), [
    'chatbot_id',
    'allowed_origins',
    'lead_fields',
    'ctas',
    'escalation',
    'widget',
    'retrieval',
    'answers',
    'hours',
    'retention',
  ]);
  t.ok(await services.retention.dueAt(bot.id), 'the gateways will sweep it');
  const off = await ok(['bot', 'configure', '--bot', 'Retention', '--retention-days', 'off']);
  t.same(off.retention, { conversations_days: null, leads_days: 365 });
  t.same(
    await runCli(['bot', 'configure', '--bot', bot.id, '--retention-days', 'forever'], env),
    failure('--retention-days must be a number of days or off'),
  );
  t.same(
    await runCli(['bot', 'configure', '--bot', bot.id, '--lead-retention-days', '0'], env),
    failure('retention.leads_days: must be a whole number of days from 1 to 3650, or null (keep for ever)'),
  );
});

t.test('conversation delete erases the conversation and its lead, and says so', async (t) => {
  const { messages } = await fullConversation(services, bot, 'embed-erase-me');
  t.same(await ok(['conversation', 'delete', '--bot', bot.id, '--session', 'embed-erase-me']), {
    chatbot_id: bot.id,
    session_id: 'embed-erase-me',
    deleted: { conversation: true, messages, lead: true },
  });
  t.same(
    await runCli(['conversation', 'show', '--bot', bot.id, '--session', 'embed-erase-me'], env),
    failure('Conversation not found.'),
  );
  t.same(
    await runCli(['conversation', 'delete', '--bot', bot.id, '--session', 'embed-erase-me'], env),
    failure('Conversation not found.'),
  );
  t.same(await services.leads.list(bot.id), []);
  t.same(
    await runCli(['conversation', 'delete', '--bot', crypto.randomUUID(), '--session', 'embed-x'], env),
    failure('Chatbot not found.'),
  );
});
