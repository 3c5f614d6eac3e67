import t, { type Test } from 'tap';
import { fetchResource } from '../../src/ingest/page-fetcher.ts';
import {
  assertPublicDestination,
  assertPublicHost,
  ForbiddenDestinationError,
  hostOf,
  isPublicAddress,
} from '../../src/net/ssrf-guard.ts';
import { createConnectorHttp, DEFAULT_BASE_URLS } from '../../src/sources/connectors/connector-http.ts';
import { REFUSED_DESTINATION, WebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { CountingServer, fakeEgress } from '../fakes/fake-egress.ts';
import { FAKE_DNS, PUBLIC_ADDRESS, redirectHosts, ssrfCorpus } from './ssrf-corpus.ts';

const canary = await new CountingServer((_req, res) => res.end('canary')).start();
const redirects = redirectHosts(canary.port);
const redirector = await new CountingServer((req, res) => {
  const target = redirects.get((req.headers.host ?? '').replace(/:\d+$/, ''));
  res.writeHead(target ? 302 : 404, target ? { location: target } : {});
  res.end();
}).start();
const site = await new CountingServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('public page');
}).start();
t.teardown(async () => {
  await Promise.all([canary.stop(), redirector.stop(), site.stop()]);
});
const table: Record<string, string[]> = {
  ...FAKE_DNS,
  'www.public-docs.com': [PUBLIC_ADDRESS, '2606:4700::6810:84e5'],
};
for (const host of redirects.keys()) table[host] = [PUBLIC_ADDRESS];
const corpus = ssrfCorpus(canary.port, redirector.port);

t.test('the corpus has at least 60 forms', async (t) => {
  t.ok(corpus.length >= 60, `${corpus.length} URL forms`);
  t.equal(new Set(corpus.map((entry) => entry.url)).size, corpus.length, 'no form twice');
});

t.test('public addresses: IPv4 unicast, IPv6 global unicast, and IPv6 embedding a public IPv4', async (t) => {
  for (const address of [
    '8.8.8.8',
    PUBLIC_ADDRESS,
    '2606:4700::6810:84e5',
    '2a00:1450:4001:82a::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ]) {
    t.equal(isPublicAddress(address), true, address);
  }
  for (const address of [
    '127.0.0.1',
    '0.0.0.0',
    '10.0.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '192.0.2.1',
    '::',
    '::1',
    '::127.0.0.1',
    '::a9fe:a9fe',
    '::ffff:7f00:1',
    '::ffff:0:7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::808:808',
    '2002:a9fe:a9fe::',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001:0:c0a8:101::1',
    '2001:db8::1',
    '2001:2::1',
    '3fff::1',
    '2620:4f:8000::1',
    'fe80::1',
    'fe80::1%eth0',
    'fd00::2',
    'fec0::1',
    'ff02::1',
    '100::1',
    '4000::1',
    'not an address',
  ]) {
    t.equal(isPublicAddress(address), false, address);
  }
});

t.test('host checks without DNS: literals, numeric forms, local names; the guard can be lifted', async (t) => {
  for (const host of [
    '127.0.0.1',
    '::1',
    '0x7f.1',
    '127.1',
    'localhost',
    'LOCALHOST.',
    'a.b.localhost',
    'x.internal',
    '',
  ]) {
    t.throws(() => assertPublicHost(host, false), new ForbiddenDestinationError(host), JSON.stringify(host));
    t.doesNotThrow(() => assertPublicHost(host, true), `${JSON.stringify(host)} with the guard lifted`);
  }
  for (const host of ['8.8.8.8', 'www.public-docs.com', 'localhost-docs.com', 'internal.example.com']) {
    t.doesNotThrow(() => assertPublicHost(host, false), host);
  }
  t.equal(hostOf(new URL('http://[::1]:8/')), '::1');
});

t.test('every refused form is refused alike before it is stored; redirecting sites pass', async (t) => {
  const egress = fakeEgress(table);
  for (const entry of corpus) {
    const url = new URL(entry.url);
    const verdict = await assertPublicDestination(url, false, egress).then(
      () => 'accepted',
      (error: unknown) => error,
    );
    if (entry.kind === 'redirect') t.equal(verdict, 'accepted', entry.url);
    else {
      t.ok(verdict instanceof ForbiddenDestinationError, `${entry.url} (${entry.why})`);
      t.equal((verdict as Error).message, `${hostOf(url)} is not a public address`, 'one text, whatever the reason');
    }
  }
  t.notOk(
    egress.asked.some((name) => name.endsWith('localhost') || /^[\d.]+$/.test(name) || name.includes(':')),
    'literals and local names are never sent to DNS',
  );
  await assertPublicDestination(new URL('http://127.0.0.1/'), true, egress);
});

/** Runs one fetch path over the corpus: each refused form must fail, each redirect end unfollowed. */
async function throughPath(
  t: Test,
  path: string,
  attempt: (url: string) => Promise<unknown>,
  judge: (entry: (typeof corpus)[number], outcome: unknown) => void,
) {
  const before = { canary: canary.connections, redirector: redirector.requests.length };
  for (const entry of corpus) judge(entry, await attempt(entry.url).catch((error: unknown) => error));
  t.equal(canary.connections - before.canary, 0, `${path}: the canary saw no connection`);
  t.equal(
    redirector.requests.length - before.redirector,
    redirects.size,
    `${path}: each public-looking site was asked once`,
  );
}

t.test('the crawler fetch refuses every form and never follows a redirect into one', async (t) => {
  const egress = fakeEgress(table);
  const options = { allowPrivate: false, egress, timeoutMs: 2000, maxBytes: 4096, maxRedirects: 5, accept: '*/*' };
  await throughPath(
    t,
    'crawler',
    (url) => fetchResource(url, options),
    (entry, outcome) => t.ok(outcome instanceof ForbiddenDestinationError, `${entry.url}: ${String(outcome)}`),
  );
  const control = await fetchResource(`http://www.public-docs.com:${site.port}/`, options);
  t.equal(control.statusCode, 200, 'a public-looking site is fetched through the same fakes');
});

t.test('the connectors’ HTTP layer refuses every form, redirects included', async (t) => {
  const http = createConnectorHttp({
    baseUrls: DEFAULT_BASE_URLS,
    allowPrivate: false,
    egress: fakeEgress(table),
    timeoutMs: 2000,
    maxBytes: 4096,
    retries: 0,
    maxRetryAfterMs: 0,
  });
  await throughPath(
    t,
    'connectors',
    (url) => http.request(url),
    (entry, outcome) => t.ok(outcome instanceof ForbiddenDestinationError, `${entry.url}: ${String(outcome)}`),
  );
  t.equal((await http.request(`http://www.public-docs.com:${site.port}/`)).statusCode, 200);
});

t.test('a webhook attempt is refused with one text; a redirect is a failed attempt, not followed', async (t) => {
  const sender = new WebhookSender({ timeoutMs: 2000, allowPrivate: false, egress: fakeEgress(table) });
  const send = (url: string) =>
    sender.send({
      url,
      secret: 'whsec_x',
      event: 'message.received',
      body: '{}',
      deliveryId: 'd',
      attempt: 1,
      timestampSeconds: 0,
      standardWebhooks: false,
    });
  await throughPath(t, 'webhooks', send, (entry, outcome) => {
    const { statusCode, error } = outcome as { statusCode: number | null; error: string | null };
    if (entry.kind === 'redirect') t.same([statusCode, error], [302, null], entry.url);
    else t.same([statusCode, error], [null, REFUSED_DESTINATION], entry.url);
  });
  const control = await send(`http://www.public-docs.com:${site.port}/hook`);
  t.same([control.statusCode, control.error], [200, null]);
});
