import t from 'tap';
import type { Lead } from '../../src/contract/lead.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { LeadStore } from '../../src/store/lead-store.ts';
import { startRedis } from '../support/redis-server.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  await server.stop();
});
const keys = new RedisKeys('sb:');
const leads = new LeadStore(redis, keys);

function lead(chatbotId: string, sessionId: string, name: string): Lead {
  return {
    lead_id: crypto.randomUUID(),
    chatbot_id: chatbotId,
    session_id: sessionId,
    name,
    email: `${name.toLowerCase()}@example.com`,
    phone: '',
    custom_data: {},
    created_at: '2026-11-25T10:00:00.000000+00:00',
  };
}

async function save(entry: Lead): Promise<Lead> {
  const saved = await leads.save(entry, 1, { id: crypto.randomUUID(), json: '{}', dueAt: 1 });
  return saved.lead;
}

t.test("ofSessions finds the lead each session left, latest form's fields, and only that chatbot's", async (t) => {
  const bot = crypto.randomUUID();
  const other = crypto.randomUUID();
  const ada = await save(lead(bot, 'embed-a', 'Ada'));
  const grace = await save(lead(bot, 'embed-b', 'Grace'));
  const updated = await save({ ...lead(bot, 'embed-b', 'Grace'), phone: '+44 20 0000' });
  await save(lead(other, 'embed-c', 'Linus'));
  const found = await leads.ofSessions(bot, ['embed-a', 'embed-b', 'embed-c', 'embed-none']);
  t.same([...found.keys()], ['embed-a', 'embed-b']);
  t.same(found.get('embed-a'), ada);
  t.same(found.get('embed-b'), { ...updated, lead_id: grace.lead_id, created_at: grace.created_at });
  t.same(await leads.ofSessions(bot, []), new Map());
});
