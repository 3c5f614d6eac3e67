import t from 'tap';
import { loadConfig } from '../src/config.ts';
import { gatewaySetup, startupBanner, startupFacts } from '../src/startup.ts';

t.test('the facts name where to go, and the Redis without its credentials', async (t) => {
  const config = loadConfig({ REDIS_URL: 'redis://user:s3cret@redis.internal:6380/0', GEMINI_API_KEY: 'g' });
  const facts = startupFacts(config, gatewaySetup(config, 8080));
  t.same(facts, {
    dashboard: 'http://localhost:8080/dashboard',
    api: 'http://localhost:8080/api/v1',
    widget_script: 'http://localhost:8080/widget.js',
    providers: { chatgpt: false, gemini: true, ollama: true },
    embeddings: 'local',
    data: 'Redis at redis.internal:6380',
  });
  t.notMatch(JSON.stringify(facts), /s3cret/);
  const managed = loadConfig({ PUBLIC_URL: 'https://bots.example.com/', DATA_DIR: '/var/lib/switchboard' });
  t.match(startupFacts(managed, gatewaySetup(managed, 8080)), {
    dashboard: 'https://bots.example.com/dashboard',
    data: 'a managed redis-server under /var/lib/switchboard',
  });
  const cluster = (env: Record<string, string>) =>
    startupFacts(loadConfig(env), gatewaySetup(loadConfig(env), 8080)).data;
  t.equal(
    cluster({ REDIS_URL: 'redis://:pw@10.0.0.1:7000,redis://:pw@10.0.0.2:7000' }),
    'Redis Cluster at 10.0.0.1:7000, 10.0.0.2:7000',
  );
  t.equal(
    cluster({ REDIS_URL: 'rediss://:pw@cache.example.com:6380', REDIS_CLUSTER: '1' }),
    'Redis Cluster at cache.example.com:6380',
  );
});

t.test('at a terminal: the same facts in words, with the next step', async (t) => {
  const config = loadConfig({ OPENAI_API_KEY: 'sk' });
  t.equal(
    startupBanner(startupFacts(config, gatewaySetup(config, 18080))),
    [
      'Switchboard is running.',
      '  Dashboard   http://localhost:18080/dashboard',
      '  API         http://localhost:18080/api/v1',
      '  Widget      <script src="http://localhost:18080/widget.js" data-chatbot="CHATBOT_ID" defer></script>',
      '  Providers   chatgpt, gemini (no API key), ollama',
      '  Embeddings  local',
      '  Data        a managed redis-server under ./data',
      'Next: sign in at http://localhost:18080/dashboard; npx switchboard doctor says what is missing.',
      '',
    ].join('\n'),
  );
});

t.test('on first run: the one-time setup link is the next step', async (t) => {
  const config = loadConfig({ PUBLIC_URL: 'https://bots.example.com' });
  const facts = startupFacts(config, gatewaySetup(config, 8080), 'T'.repeat(43));
  t.equal(facts.setup_url, `https://bots.example.com/dashboard/#/setup/${'T'.repeat(43)}`);
  t.same(startupBanner(facts).split('\n').slice(-4), [
    'Next: create the owner account at',
    `  https://bots.example.com/dashboard/#/setup/${'T'.repeat(43)}`,
    '  (this link works once, for 24 hours; restarting the gateway prints a new one)',
    '',
  ]);
});
