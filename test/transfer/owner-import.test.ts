import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices } from '../../src/services.ts';
import { readExportStream } from '../../src/transfer/export-stream.ts';
import { importOwner } from '../../src/transfer/owner-import.ts';
import { connectedRedis } from '../support/connected-redis.ts';

// What an import does with what it cannot bring along (connections, disabled source types), with a
// record a store refuses, and that it sends no webhook event for anything it writes.
const { redis } = await connectedRedis(t);
const s = createServices(redis, loadConfig({ SECRET_KEY: '5e'.repeat(32) }), systemClock, createLogger('silent'));
const deps = { ...s, clock: systemClock };
const AT = '2026-11-21T21:06:33.123456+00:00';
const BOT = '72f48e50-2091-4a05-8190-6be764c4ef21';

function exportOf(email: string, records: unknown[], counts: Record<string, number>, connectors: string[] = []) {
  const header = {
    type: 'header',
    format: 'switchboard-export',
    version: 1,
    exported_at: AT,
    account: { id: crypto.randomUUID(), email, plan: 'scale', created_at: AT, connectors },
  };
  const end = { type: 'end', counts: { chatbots: 0, sources: 0, conversations: 0, leads: 0, webhooks: 0, ...counts } };
  return readExportStream([header, ...records, end].map((record) => JSON.stringify(record)).join('\n'));
}

function chatbot(id: string, overrides: Record<string, unknown> = {}) {
  return {
    type: 'chatbot',
    chatbot: {
      id,
      name: 'Docs',
      slug: 'docs',
      provider: 'chatgpt',
      model: 'gpt-4o-mini',
      is_active: true,
      created_at: AT,
      system_prompt: '',
      fallback_message: 'Sorry.',
      settings: { retention: { conversations_days: 30 } },
      ...overrides,
    },
  };
}

function connectorSource(type: string, reference: string, service: string | null) {
  return {
    type: 'source',
    source: {
      id: crypto.randomUUID(),
      chatbot_id: BOT,
      type,
      title: '',
      url: '',
      reference,
      refresh: 'weekly',
      created_at: AT,
      connection_service: service,
    },
    content: null,
  };
}

t.test('connector sources: with a connection of the account, without one failed with why', async (t) => {
  const notion = connectorSource('notion', 'https://www.notion.so/Handbook-0123456789abcdef0123456789abcdef', 'notion');
  const drive = connectorSource('google_drive', 'https://drive.google.com/drive/folders/abc123', 'google_drive');
  const onedrive = connectorSource('onedrive', 'https://onedrive.live.com/?id=ABC', 'microsoft');
  const stream = exportOf('connectors@example.com', [chatbot(BOT), notion, drive, onedrive], {
    chatbots: 1,
    sources: 3,
  });
  const owner = await s.accounts.create('existing-connectors@example.com', 'scale');
  const connection = await s.connections.create(owner.id, {
    service: 'notion',
    authKind: 'token',
    secret: { token: 'secret_abc' },
  });
  const result = await importOwner(deps, stream, { userId: owner.id });
  t.equal(result.sources_queued, 1);
  t.same(
    result.sources_failed.map(({ error }) => error),
    [
      'Connect Google Drive, then add this source again: its connection did not come with the export.',
      'Source type onedrive is not enabled for this account.',
    ],
  );
  const sources = await s.sources.listForChatbot(result.new_ids[BOT] ?? BOT);
  t.same(sources.map((source) => [source.type, source.status, source.connection_id]).sort(), [
    ['google_drive', 'failed', ''],
    ['notion', 'pending', connection.id],
    ['onedrive', 'failed', ''],
  ]);
  t.equal(await s.ingestion.size(), 1, 'only the readable one is queued');
  t.ok(await s.retention.dueAt(result.new_ids[BOT] ?? BOT), "the chatbot's retention is scheduled");
});

t.test('a record a store refuses stops the import before anything is written', async (t) => {
  const bad = chatbot(crypto.randomUUID(), { fallback_message: ' ' });
  const stream = exportOf('refused@example.com', [chatbot(crypto.randomUUID()), bad], { chatbots: 2 });
  await t.rejects(importOwner(deps, stream, {}), {
    name: 'ValidationError',
    detail: 'Line 3: fallback_message must be 1 to 2000 characters.',
  });
  t.equal(await s.accounts.findIdByEmail('refused@example.com'), undefined, 'not even the account');
  const settings = chatbot(crypto.randomUUID(), { settings: { widget: { color: 'teal' } } });
  await t.rejects(importOwner(deps, exportOf('refused@example.com', [settings], { chatbots: 1 }), {}), {
    name: 'ValidationError',
    detail: 'Line 2: widget.color: must be a hex colour like #2563eb',
  });
  await t.rejects(importOwner(deps, exportOf('plan@example.com', [], {}), { plan: 'gold' }), {
    name: 'ValidationError',
    detail: 'plan must be one of: free, hobby, standard, scale.',
  });
});

t.test('nothing imported reaches a webhook: no pending event is recorded', async (t) => {
  const id = crypto.randomUUID();
  const conversation = {
    type: 'conversation',
    conversation: {
      conversation_id: crypto.randomUUID(),
      chatbot_id: id,
      session_id: 'embed-quiet',
      source: 'embed',
      created_at: AT,
      last_activity_at: AT,
      escalated_at: AT,
      taken_over_by: null,
      messages: [{ role: 'user', content: 'Hi', created_at: AT }],
    },
  };
  const lead = {
    type: 'lead',
    lead: {
      lead_id: crypto.randomUUID(),
      chatbot_id: id,
      session_id: 'embed-quiet',
      name: 'Quiet',
      email: 'quiet@example.com',
      phone: '',
      custom_data: {},
      created_at: AT,
    },
  };
  const stream = exportOf('quiet@example.com', [chatbot(id), conversation, lead], {
    chatbots: 1,
    conversations: 1,
    leads: 1,
  });
  const result = await importOwner(deps, stream, {});
  t.same(result.imported, { chatbots: 1, sources: 0, conversations: 1, messages: 1, leads: 1 });
  t.same(await redis.hLen(s.keys.pendingEvents(id)), 0);
  t.same(await s.conversations.get(id, 'embed-quiet'), {
    conversation_id: conversation.conversation.conversation_id,
    chatbot_id: id,
    session_id: 'embed-quiet',
    source: 'embed',
    escalated_at: AT,
    taken_over_by: null,
  });
});
