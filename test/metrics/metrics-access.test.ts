import { readFileSync } from 'node:fs';
import t from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startGateway } from '../support/gateway.ts';
import { Scrape } from '../support/prometheus-scrape.ts';
import { promtool, promtoolMissing } from '../support/promtool.ts';

// Issue 24, item 1: who may scrape /metrics, on which port; and Prometheus's own tool checks the
// exposition, the documented alerts and the sample dashboard's queries.
const TOKEN = 'the-metrics-token-0123';
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const UNAUTHORIZED = { detail: 'Missing or invalid metrics token.' };

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    challenge: res.headers.get('www-authenticate'),
    text,
  };
}

t.test('METRICS_TOKEN alone: /metrics on the public port, 401 without the bearer token', async (t) => {
  const gw = await startGateway({ METRICS_TOKEN: TOKEN });
  t.teardown(() => gw.stop());
  t.equal(gw.app.metricsPort, undefined, 'no separate port');
  const url = `${gw.baseUrl}/metrics`;
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer wrong-token-wrong-token' },
    { authorization: `Basic ${TOKEN}` },
  ];
  for (const headers of attempts) {
    const res = await get(url, headers);
    t.same(
      { status: res.status, type: res.type, challenge: res.challenge, body: JSON.parse(res.text) },
      { status: 401, type: 'application/json', challenge: 'Bearer', body: UNAUTHORIZED },
      JSON.stringify(headers),
    );
  }
  const ok = await get(url, { authorization: `Bearer ${TOKEN}` });
  t.same([ok.status, ok.type], [200, CONTENT_TYPE]);
  const scrape = new Scrape(ok.text);
  t.equal(
    scrape.value('switchboard_http_requests_total', { method: 'GET', route: '/metrics', status_class: '4xx' }),
    3,
  );
});

t.test('METRICS_PORT alone: a separate port on loopback, nothing on the public port', async (t) => {
  const gw = await startGateway({ METRICS_PORT: '0' });
  t.teardown(() => gw.stop());
  const notFound = await get(`${gw.baseUrl}/metrics`);
  t.same([notFound.status, JSON.parse(notFound.text)], [404, { detail: 'Not Found' }]);
  const base = `http://127.0.0.1:${gw.app.metricsPort}`;
  const ok = await get(`${base}/metrics`);
  t.same([ok.status, ok.type], [200, CONTENT_TYPE]);
  t.match(ok.text, /^# HELP switchboard_http_requests_total /m);
  const elsewhere = await get(`${base}/api/v1/chatbots`);
  t.same([elsewhere.status, JSON.parse(elsewhere.text)], [404, { detail: 'Not Found' }]);
  const post = await fetch(`${base}/metrics`, { method: 'POST' });
  t.same([post.status, await post.json()], [404, { detail: 'Not Found' }]);
});

t.test('both: the separate port asks for the token too', async (t) => {
  const gw = await startGateway({ METRICS_PORT: '0', METRICS_TOKEN: TOKEN });
  t.teardown(() => gw.stop());
  const url = `http://127.0.0.1:${gw.app.metricsPort}/metrics`;
  const refused = await get(url);
  t.same([refused.status, refused.challenge, JSON.parse(refused.text)], [401, 'Bearer', UNAUTHORIZED]);
  t.equal((await get(url, { authorization: `Bearer ${TOKEN}` })).status, 200);
  t.equal((await get(`${gw.baseUrl}/metrics`, { authorization: `Bearer ${TOKEN}` })).status, 200);
});

t.test('neither: no metrics, no observers, no trace SDK', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.stop());
  const { telemetry } = gw.app;
  t.same(
    [
      gw.app.metricsPort,
      telemetry.metrics,
      telemetry.tracing,
      telemetry.turns,
      telemetry.deliveries,
      telemetry.ingestion,
    ],
    [undefined, undefined, undefined, undefined, undefined, undefined],
  );
  t.equal((await get(`${gw.baseUrl}/metrics`)).status, 404);
});

t.test('a taken metrics port stops the start with a message naming METRICS_PORT', async (t) => {
  const first = await startGateway({ METRICS_PORT: '0' });
  t.teardown(() => first.stop());
  const config = loadConfig({
    REDIS_URL: first.redis.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    METRICS_PORT: String(first.app.metricsPort),
  });
  await t.rejects(startApp(config, createLogger('silent')), {
    name: 'MetricsListenError',
    message: `metrics cannot listen on 127.0.0.1:${first.app.metricsPort} (EADDRINUSE): set METRICS_PORT`,
  });
});

t.test('promtool: the exposition, the alert rules and the dashboard queries', { skip: promtoolMissing }, async (t) => {
  const gw = await startGateway({ METRICS_PORT: '0' });
  t.teardown(() => gw.stop());
  const exposition = (await get(`http://127.0.0.1:${gw.app.metricsPort}/metrics`)).text;
  const lint = promtool(['check', 'metrics'], exposition);
  // Only prom-client's own default gauges, named before the convention, are reported; none of ours.
  t.same(lint.output.trim().split('\n').sort(), [
    'nodejs_active_handles_total non-counter metrics should not have "_total" suffix',
    'nodejs_active_requests_total non-counter metrics should not have "_total" suffix',
    'nodejs_active_resources_total non-counter metrics should not have "_total" suffix',
  ]);
  const rules = promtool(['check', 'rules', 'docs/prometheus-alerts.yml']);
  t.equal(rules.status, 0, rules.output);
  t.match(rules.output, /SUCCESS: 13 rules found/);

  // The dashboard's queries, with Grafana's variables filled in, parsed by Prometheus as recording rules.
  const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((panel: any) => (panel.targets ?? []).map((q: any) => q.expr));
  t.equal(exprs.length, 23);
  const filled = exprs.map((expr) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*'));
  const file = t.testdir({
    'dashboard-rules.yml': JSON.stringify({
      groups: [{ name: 'dashboard', rules: filled.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
    }),
  });
  const queries = promtool(['check', 'rules', `${file}/dashboard-rules.yml`]);
  t.equal(queries.status, 0, queries.output);
  // Every metric the dashboard and the alerts read is one the gateway exposes.
  const families = new Set(new Scrape(exposition).types.keys());
  const alerts = readFileSync('docs/prometheus-alerts.yml', 'utf8');
  const read = [...new Set([...exprs.join('\n').matchAll(NAMES), ...alerts.matchAll(NAMES)].map((m) => m[1]!))];
  t.same(
    read.filter((name) => !families.has(name.replace(/_(bucket|sum|count)$/, ''))),
    [],
    'no unknown metric',
  );
});

const NAMES = /\b((?:switchboard|nodejs|process)_[a-z0-9_]+)/g;
