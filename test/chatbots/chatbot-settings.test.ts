import t from 'tap';
import {
  applySettingsPatch,
  DEFAULT_SETTINGS,
  parseSettings,
  retentionOn,
} from '../../src/chatbots/chatbot-settings.ts';
import { NO_OFFICE_HOURS } from '../../src/chatbots/office-hours.ts';
import { ValidationError } from '../../src/errors.ts';

const RETENTION_DAYS = 'must be a whole number of days from 1 to 3650, or null (keep for ever)';

t.test('a patch changes only what it names; nested sections merge', async (t) => {
  const next = applySettingsPatch(structuredClone(DEFAULT_SETTINGS), {
    allowed_origins: ['https://shop.example', 'http://localhost:3000/'],
    escalation: { keywords: ['refund'] },
    widget: { color: '#112233' },
  });
  t.same(next, {
    allowed_origins: ['https://shop.example', 'http://localhost:3000'],
    lead_fields: [],
    ctas: [],
    escalation: { smart_intent: true, keywords: ['refund'], fallback_streak: 0 },
    widget: { title: '', color: '#112233', welcome_message: 'Hi! How can I help you today?' },
    retrieval: { query_rewrite: false },
    answers: { citations: true, api_citations: false, sources_only: false },
    hours: NO_OFFICE_HOURS,
    retention: { conversations_days: null, leads_days: null },
  });
  const again = applySettingsPatch(next, { escalation: { fallback_streak: 2 } });
  t.same(again.escalation, { smart_intent: true, keywords: ['refund'], fallback_streak: 2 });
  t.same(again.allowed_origins, next.allowed_origins);
});

t.test('bad settings are refused with a detail naming the setting', async (t) => {
  const cases: Array<[unknown, string]> = [
    [
      { allowed_origins: ['https://shop.example/path'] },
      'allowed_origins[0]: "https://shop.example/path" is not an origin like https://example.com',
    ],
    [
      { allowed_origins: ['ftp://x.example'] },
      'allowed_origins[0]: "ftp://x.example" is not an origin like https://example.com',
    ],
    [
      { lead_fields: [{ name: 'Company', label: 'Company' }] },
      'lead_fields[0].name: must be 1-40 characters of a-z, 0-9 and _, starting with a letter',
    ],
    [{ lead_fields: [{ name: 'email', label: 'Email' }] }, 'lead_fields[0].name: name, email and phone are built in'],
    [
      {
        lead_fields: [
          { name: 'a', label: 'A' },
          { name: 'a', label: 'B' },
        ],
      },
      'lead_fields: field names must be unique',
    ],
    [{ ctas: [{ id: 'go', label: 'Go', action: 'link' }] }, 'ctas[0]: a link needs a url'],
    [{ ctas: [{ id: 'go', label: 'Go', action: 'message' }] }, 'ctas[0]: a message action needs a message'],
    [
      { ctas: [{ id: 'go', label: 'Go', action: 'fly' }] },
      'ctas[0].action: Invalid option: expected one of "link"|"escalate"|"message"',
    ],
    [{ widget: { color: 'blue' } }, 'widget.color: must be a hex colour like #2563eb'],
    [{ escalation: { fallback_streak: -1 } }, 'escalation.fallback_streak: Too small: expected number to be >=0'],
    [{ colour: '#fff' }, 'settings: Unrecognized key: "colour"'],
    [{ retrieval: { query_rewrite: 'yes' } }, 'retrieval.query_rewrite: must be true or false'],
    [{ retrieval: { query_rewrite: null } }, 'retrieval.query_rewrite: must be true or false'],
    [{ retrieval: { rewrite: true } }, 'retrieval: Unrecognized key: "rewrite"'],
    [{ answers: { citations: 'on' } }, 'answers.citations: must be true or false'],
    [{ answers: { api_citations: 1 } }, 'answers.api_citations: must be true or false'],
    [{ answers: { sources: true } }, 'answers: Unrecognized key: "sources"'],
    [{ retention: { conversations_days: 0 } }, `retention.conversations_days: ${RETENTION_DAYS}`],
    [{ retention: { conversations_days: 1.5 } }, `retention.conversations_days: ${RETENTION_DAYS}`],
    [{ retention: { leads_days: 3651 } }, `retention.leads_days: ${RETENTION_DAYS}`],
    [{ retention: { leads_days: '30' } }, `retention.leads_days: ${RETENTION_DAYS}`],
    [{ retention: { days: 30 } }, 'retention: Unrecognized key: "days"'],
  ];
  for (const [patch, detail] of cases) {
    t.throws(() => applySettingsPatch(structuredClone(DEFAULT_SETTINGS), patch), new ValidationError(detail), detail);
  }
});

t.test('query rewrite is off by default and turned on and off by a patch', async (t) => {
  t.same(DEFAULT_SETTINGS.retrieval, { query_rewrite: false });
  const on = applySettingsPatch(structuredClone(DEFAULT_SETTINGS), { retrieval: { query_rewrite: true } });
  t.same(on, { ...DEFAULT_SETTINGS, retrieval: { query_rewrite: true } });
  t.same(applySettingsPatch(on, { widget: { title: 'T' } }).retrieval, { query_rewrite: true }, 'left as it was');
  t.same(applySettingsPatch(on, { retrieval: {} }).retrieval, { query_rewrite: true });
  t.same(applySettingsPatch(on, { retrieval: { query_rewrite: false } }).retrieval, { query_rewrite: false });
});

t.test('stored settings missing newer sections read as defaults', async (t) => {
  t.same(parseSettings(undefined), DEFAULT_SETTINGS);
  const stored = {
    allowed_origins: [],
    lead_fields: [],
    ctas: [],
    escalation: { smart_intent: false, keywords: [], fallback_streak: 0 },
    widget: { title: 'Old', color: '#000000', welcome_message: '' },
  };
  t.same(
    parseSettings(JSON.stringify(stored)),
    {
      ...stored,
      retrieval: { query_rewrite: false },
      answers: { citations: true, api_citations: false, sources_only: false },
      hours: NO_OFFICE_HOURS,
      retention: { conversations_days: null, leads_days: null },
    },
    'settings stored before the retrieval, answers, hours and retention groups have their defaults',
  );
  t.same(parseSettings('{"allowed_origins":["https://a.example"]}'), {
    ...DEFAULT_SETTINGS,
    allowed_origins: ['https://a.example'],
  });
});

t.test('settings read back share nothing with the defaults or with each other', async (t) => {
  const first = parseSettings('{"escalation":{"smart_intent":false}}');
  const second = parseSettings('{"escalation":{"smart_intent":false}}');
  first.escalation.keywords.push('refund');
  first.allowed_origins.push('https://a.example');
  first.hours.weekly.mon.push(['09:00', '17:00']);
  t.same(second.escalation, { smart_intent: false, keywords: [], fallback_streak: 0 });
  t.same(
    [second.allowed_origins, DEFAULT_SETTINGS.escalation.keywords, DEFAULT_SETTINGS.allowed_origins],
    [[], [], []],
  );
  t.same(second.hours, NO_OFFICE_HOURS);
  t.same(DEFAULT_SETTINGS.hours, NO_OFFICE_HOURS);
});

t.test('answers cite their sources by default, API replies do not, and the AI answers everything', async (t) => {
  t.same(DEFAULT_SETTINGS.answers, { citations: true, api_citations: false, sources_only: false });
  const api = applySettingsPatch(structuredClone(DEFAULT_SETTINGS), { answers: { api_citations: true } });
  t.same(api.answers, { citations: true, api_citations: true, sources_only: false });
  const strict = applySettingsPatch(api, { answers: { citations: false, sources_only: true } });
  t.same(strict.answers, { citations: false, api_citations: true, sources_only: true });
  t.same(applySettingsPatch(strict, { widget: { title: 'T' } }).answers, strict.answers, 'left as it was');
});

t.test('retention keeps everything by default; each kind is set in days and cleared with null', async (t) => {
  t.same(DEFAULT_SETTINGS.retention, { conversations_days: null, leads_days: null });
  t.equal(retentionOn(DEFAULT_SETTINGS), false);
  const conversations = applySettingsPatch(structuredClone(DEFAULT_SETTINGS), {
    retention: { conversations_days: 30 },
  });
  t.same(conversations.retention, { conversations_days: 30, leads_days: null });
  t.equal(retentionOn(conversations), true);
  const both = applySettingsPatch(conversations, { retention: { leads_days: 3650 } });
  t.same(both.retention, { conversations_days: 30, leads_days: 3650 }, 'merged into what was set');
  const cleared = applySettingsPatch(both, { retention: { conversations_days: null } });
  t.same(cleared.retention, { conversations_days: null, leads_days: 3650 });
  t.equal(retentionOn(applySettingsPatch(cleared, { retention: { leads_days: null } })), false);
});
