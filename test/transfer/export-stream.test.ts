import t from 'tap';
import { ValidationError } from '../../src/errors.ts';
import { readExportStream } from '../../src/transfer/export-stream.ts';

// What `import` refuses before it writes anything, each with one line that says what and where.
const AT = '2026-11-21T21:06:33.123456+00:00';
const BOT = '72f48e50-2091-4a05-8190-6be764c4ef21';
const header = {
  type: 'header',
  format: 'switchboard-export',
  version: 1,
  exported_at: AT,
  account: { id: 'u1', email: 'a@example.com', plan: 'scale', created_at: AT, connectors: [] },
};
const chatbot = {
  type: 'chatbot',
  chatbot: {
    id: BOT,
    name: 'Demo',
    slug: 'demo',
    provider: 'chatgpt',
    model: 'gpt-4o-mini',
    is_active: true,
    created_at: AT,
    system_prompt: 'Be kind.',
    fallback_message: 'Sorry.',
    settings: {},
  },
};
const lead = {
  type: 'lead',
  lead: {
    lead_id: 'l1',
    chatbot_id: BOT,
    session_id: 'embed-1',
    name: 'Ada',
    email: 'ada@example.com',
    phone: '',
    custom_data: {},
    created_at: AT,
  },
};
const end = (counts: Partial<Record<string, number>> = {}) => ({
  type: 'end',
  counts: { chatbots: 1, sources: 0, conversations: 0, leads: 1, webhooks: 0, ...counts },
});
const stream = (...records: unknown[]) => `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;

t.test('a whole stream is read with each record and its line', async (t) => {
  const read = readExportStream(stream(header, chatbot, lead, end()));
  t.same(read.header, header);
  t.same(
    read.records.map(({ line, record }) => [line, record.type]),
    [
      [2, 'chatbot'],
      [3, 'lead'],
    ],
  );
});

t.test('refusals, one line each', async (t) => {
  const cases: Array<[string, string]> = [
    ['', 'The import is empty: give it the lines `switchboard export` printed.'],
    ['{"hello"', 'Line 1 is not JSON.'],
    [stream({ type: 'chatbot' }), 'Not a Switchboard export: its first line is not the export header.'],
    [stream({ ...header, format: 'other' }), 'Not a Switchboard export: its first line is not the export header.'],
    [stream({ ...header, version: 2 }, end()), 'Unsupported export version 2: this Switchboard reads version 1.'],
    [stream({ ...header, version: '1' }), 'Unsupported export version "1": this Switchboard reads version 1.'],
    [
      stream({ ...header, account: { ...header.account, created_at: 'yesterday' } }),
      'Line 1: account.created_at: must be a timestamp like 2026-11-21T21:06:33.123456+00:00',
    ],
    [stream(header, chatbot, lead), 'The export is incomplete: it has no end record (it was cut short).'],
    [
      stream(header, chatbot, lead, end({ leads: 2 })),
      'The export is incomplete: its end record counts 2 leads, the stream holds 1.',
    ],
    [stream(header, chatbot, end({ leads: 0 }), lead), 'Line 4: nothing may follow the end record.'],
    [stream(header, { type: 'agent' }, end()), 'Line 2: unknown record type "agent".'],
    [stream(header, lead, chatbot, end()), `Line 2: a lead of chatbot ${BOT}, which comes before it or not at all.`],
    [
      stream(header, { ...chatbot, chatbot: { ...chatbot.chatbot, provider: 'claude' } }, lead, end()),
      'Line 2: chatbot.provider: Invalid option: expected one of "gemini"|"chatgpt"|"ollama"',
    ],
    [
      stream(header, chatbot, { ...lead, lead: { ...lead.lead, session_id: 'has space' } }, end()),
      'Line 3: lead.session_id: must be a session id',
    ],
    [
      stream(header, chatbot, lead, lead, end({ leads: 2 })),
      `Line 4: lead l1 of chatbot ${BOT} comes twice in the export.`,
    ],
  ];
  for (const [text, detail] of cases) t.throws(() => readExportStream(text), new ValidationError(detail), detail);
});
