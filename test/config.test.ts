import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.ts';

t.test('defaults match DESIGN.md', async (t) => {
  const config = loadConfig({});
  t.equal(config.PORT, 8080);
  t.equal(config.HOST, '0.0.0.0');
  t.equal(config.REDIS_PREFIX, 'sb:');
  t.equal(config.DATA_DIR, './data');
  t.equal(config.RATE_LIMIT_PER_MINUTE, 60);
  t.equal(config.CONVERSATION_RATE_LIMIT, 20);
  t.same(config.PLAN_QUOTAS, { free: 100, hobby: 2000, standard: 10000, scale: 40000 });
  t.equal(config.CONVERSATION_IDLE_MS, 600000);
  t.equal(config.SEARCH_ENGINE, 'auto');
  t.equal(config.CRAWL_ALLOW_PRIVATE, false);
  t.equal(config.WEBHOOK_TIMEOUT_MS, 10000);
  t.same(config.WEBHOOK_RETRY_DELAYS, [60, 300, 900]);
  t.equal(config.WEBHOOK_ALLOW_PRIVATE, false);
  t.equal(config.EMBEDDINGS, 'local');
  t.equal(config.REDIS_URL, undefined);
  t.equal(config.REDIS_CLUSTER, false);
  t.equal(config.REDIS_WAIT_REPLICAS, 0);
  t.equal(config.GRAPH_API_BASE_URL, 'https://graph.facebook.com');
  t.equal(config.GRAPH_API_VERSION, 'v26.0');
  t.equal(config.GRAPH_API_RETRY_MS, 1000);
});

t.test('values are parsed and typed; empty strings count as unset', async (t) => {
  const config = loadConfig({
    PORT: '9000',
    PLAN_QUOTAS: 'free=5, scale=7',
    WEBHOOK_RETRY_DELAYS: '1,2,3',
    CRAWL_ALLOW_PRIVATE: '1',
    REDIS_URL: 'redis://127.0.0.1:7000',
    OPENAI_API_KEY: '',
    UNRELATED: 'ignored',
  });
  t.equal(config.PORT, 9000);
  t.same(config.PLAN_QUOTAS, { free: 5, scale: 7 });
  t.same(config.WEBHOOK_RETRY_DELAYS, [1, 2, 3]);
  t.equal(config.CRAWL_ALLOW_PRIVATE, true);
  t.same(config.REDIS_URL, ['redis://127.0.0.1:7000']);
  t.equal(config.OPENAI_API_KEY, undefined);
});

t.test('REDIS_URL names one server or a Redis Cluster by its seed nodes', async (t) => {
  const seeds = loadConfig({
    REDIS_URL: 'redis://10.0.0.1:7000, rediss://u:p@10.0.0.2:7001',
    REDIS_WAIT_REPLICAS: '1',
  });
  t.same(seeds.REDIS_URL, ['redis://10.0.0.1:7000', 'rediss://u:p@10.0.0.2:7001']);
  t.equal(seeds.REDIS_WAIT_REPLICAS, 1);
  const flagged = loadConfig({ REDIS_URL: 'redis://10.0.0.1:7000', REDIS_CLUSTER: '1' });
  t.same([flagged.REDIS_URL, flagged.REDIS_CLUSTER], [['redis://10.0.0.1:7000'], true]);
});

t.test('a bad value stops with a message that names the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /^Invalid PORT: /],
    [{ PORT: '70000' }, /^Invalid PORT: /],
    [
      { REDIS_URL: 'http://x' },
      /^Invalid REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or several separated by commas$/,
    ],
    [
      { REDIS_URL: 'redis://a:7000,nowhere' },
      /^Invalid REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or several/,
    ],
    [{ REDIS_CLUSTER: 'yes' }, /^Invalid REDIS_CLUSTER: /],
    [{ REDIS_WAIT_REPLICAS: '6' }, /^Invalid REDIS_WAIT_REPLICAS: /],
    [{ PLAN_QUOTAS: 'free:1' }, /^Invalid PLAN_QUOTAS: "free:1" is not plan=amount$/],
    [{ PLAN_QUOTAS: 'free=1' }, /^Invalid PLAN_QUOTAS: must define the scale plan$/],
    [
      { DEFAULT_PLAN: 'gold' },
      /^Invalid DEFAULT_PLAN: must be one of the plans of PLAN_QUOTAS \(free, hobby, standard, scale\)$/,
    ],
    [{ SEARCH_ENGINE: 'elastic' }, /^Invalid SEARCH_ENGINE: /],
    [{ CRAWL_ALLOW_PRIVATE: 'yes' }, /^Invalid CRAWL_ALLOW_PRIVATE: /],
    [{ EMBEDDINGS: 'cohere:x' }, /^Invalid EMBEDDINGS: must be local, openai:<model>/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid LOG_LEVEL: /],
    [{ WEBHOOK_RETRY_DELAYS: '1,x' }, /^Invalid WEBHOOK_RETRY_DELAYS: must be comma-separated seconds$/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /^Invalid RATE_LIMIT_PER_MINUTE: /],
    [{ GRAPH_API_VERSION: '26.0' }, /^Invalid GRAPH_API_VERSION: must be a Graph API version like v26.0$/],
    [{ GRAPH_API_BASE_URL: 'ftp://graph' }, /^Invalid GRAPH_API_BASE_URL: must use http or https$/],
  ];
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env));
  }
  t.ok(new ConfigError('x') instanceof Error);
});

t.test('metrics and traces are off by default; their settings are validated', async (t) => {
  const defaults = loadConfig({});
  t.same(
    [defaults.METRICS_PORT, defaults.METRICS_HOST, defaults.METRICS_TOKEN, defaults.OTEL_EXPORTER_OTLP_ENDPOINT],
    [undefined, '127.0.0.1', undefined, undefined],
  );
  t.equal(defaults.OTEL_SERVICE_NAME, 'switchboard');
  const set = loadConfig({
    METRICS_PORT: '9464',
    METRICS_HOST: '0.0.0.0',
    METRICS_TOKEN: 'a-long-enough-token',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant = shop',
    OTEL_SERVICE_NAME: 'switchboard-eu',
  });
  t.same(
    [set.METRICS_PORT, set.METRICS_HOST, set.METRICS_TOKEN, set.OTEL_EXPORTER_OTLP_ENDPOINT, set.OTEL_SERVICE_NAME],
    [9464, '0.0.0.0', 'a-long-enough-token', 'http://collector:4318', 'switchboard-eu'],
  );
  t.same(set.OTEL_EXPORTER_OTLP_HEADERS, { authorization: 'Bearer abc', 'x-tenant': 'shop' });
  const cases: Array<[Record<string, string>, string]> = [
    [{ METRICS_PORT: '70000' }, 'Invalid METRICS_PORT: Too big: expected number to be <=65535'],
    [{ METRICS_TOKEN: 'short' }, 'Invalid METRICS_TOKEN: must be at least 16 printable characters without spaces'],
    [
      { METRICS_TOKEN: 'sixteen chars with spaces' },
      'Invalid METRICS_TOKEN: must be at least 16 printable characters without spaces',
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' },
      'Invalid OTEL_EXPORTER_OTLP_ENDPOINT: must use http or https',
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'authorization' },
      'Invalid OTEL_EXPORTER_OTLP_HEADERS: must be comma-separated name=value pairs',
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'a=%E0%A4%A' },
      'Invalid OTEL_EXPORTER_OTLP_HEADERS: must be comma-separated name=value pairs',
    ],
  ];
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env));
  }
});
