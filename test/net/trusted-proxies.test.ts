import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { TrustedProxies } from '../../src/net/trusted-proxies.ts';

t.test('by default nobody is trusted: the client is the socket peer, whatever the header says', async (t) => {
  const none = loadConfig({}).TRUSTED_PROXIES;
  t.equal(none, TrustedProxies.none);
  t.equal(loadConfig({ TRUSTED_PROXIES: '' }).TRUSTED_PROXIES, TrustedProxies.none, 'empty is unset');
  t.equal(none.clientAddress('203.0.113.9', '198.51.100.1'), '203.0.113.9');
  t.equal(none.clientAddress('127.0.0.1', '198.51.100.1'), '127.0.0.1', 'not even loopback');
  t.equal(none.clientAddress('::ffff:203.0.113.9', undefined), '203.0.113.9', 'IPv4-mapped peers as IPv4');
  t.equal(none.clientAddress('2001:db8::5', '198.51.100.1'), '2001:db8::5');
  t.equal(none.clientAddress(undefined, '198.51.100.1'), 'unknown', 'a socket already gone');
});

t.test('behind a trusted proxy the client is the rightmost X-Forwarded-For entry not trusted', async (t) => {
  const proxies = loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.10' }).TRUSTED_PROXIES;
  const cases: Array<[string, string | string[] | undefined, string, string]> = [
    ['10.1.2.3', '203.0.113.7', '203.0.113.7', 'one proxy'],
    ['10.1.2.3', '198.51.100.1, 203.0.113.7', '203.0.113.7', 'what the client wrote on the left is not believed'],
    ['10.1.2.3', '203.0.113.7, 192.0.2.10', '203.0.113.7', 'two trusted proxies in a row'],
    ['::ffff:10.1.2.3', '203.0.113.7', '203.0.113.7', 'an IPv4-mapped peer'],
    ['10.1.2.3', ['198.51.100.1', '203.0.113.7'], '203.0.113.7', 'repeated headers are one list'],
    ['10.1.2.3', ' 2001:db8::1 ', '2001:db8::1', 'an IPv6 client, spaces trimmed'],
    ['10.1.2.3', '::ffff:203.0.113.7', '203.0.113.7', 'an IPv4-mapped client'],
    ['10.1.2.3', undefined, '10.1.2.3', 'no header: the proxy itself'],
    ['10.1.2.3', '', '10.1.2.3', 'an empty header: the proxy itself'],
    ['10.1.2.3', '10.9.9.9, 10.1.1.1', '10.9.9.9', 'every hop trusted: the leftmost'],
    ['10.1.2.3', '203.0.113.7, not-an-ip', '10.1.2.3', 'garbage ends the walk at the nearest named hop'],
    ['10.1.2.3', '203.0.113.7:4711', '10.1.2.3', 'an entry with a port is not an address'],
    ['10.1.2.3', '127.1', '10.1.2.3', 'shorthand IPv4 forms are not addresses'],
    ['10.1.2.3', 'not-an-ip, 203.0.113.7', '203.0.113.7', 'garbage left of the client is never read'],
    ['203.0.113.9', '198.51.100.1', '203.0.113.9', "an untrusted peer's header is ignored"],
    ['192.0.2.11', '198.51.100.1', '192.0.2.11', 'a single address trusts only itself'],
  ];
  for (const [peer, header, expected, what] of cases) t.equal(proxies.clientAddress(peer, header), expected, what);
});

t.test('private stands for loopback, RFC 1918, unique-local and link-local addresses', async (t) => {
  const proxies = loadConfig({ TRUSTED_PROXIES: 'Private' }).TRUSTED_PROXIES;
  const trusted = ['127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1'];
  trusted.push('169.254.10.1', '::1', 'fd12:3456::1', 'fc00::1', 'fe80::1', '::ffff:192.168.1.1');
  for (const address of trusted) t.equal(proxies.trusts(address), true, address);
  const untrusted = ['172.32.0.1', '172.15.255.255', '100.64.0.1', '8.8.8.8', '192.0.2.1', '11.0.0.1'];
  untrusted.push('2001:db8::1', 'fe00::1', '::', 'not-an-ip');
  for (const address of untrusted) t.equal(proxies.trusts(address), false, address);
  const mixed = loadConfig({ TRUSTED_PROXIES: 'private,203.0.113.0/24,2001:db8::/32' }).TRUSTED_PROXIES;
  for (const address of ['10.0.0.1', '203.0.113.200', '2001:db8:ffff::1']) t.equal(mixed.trusts(address), true);
  t.equal(mixed.trusts('203.0.114.1'), false);
});

t.test('a bad entry stops the gateway with a message naming it', async (t) => {
  const bad = ['10.0.0.300', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', 'proxy.example', '10.0.0.0/', '10.0.0.0/x'];
  for (const entry of bad) {
    t.throws(
      () => loadConfig({ TRUSTED_PROXIES: `private, ${entry}` }),
      {
        name: 'ConfigError',
        message: `Invalid TRUSTED_PROXIES: "${entry}" is not an IP address, a CIDR range or private`,
      },
      entry,
    );
  }
});
