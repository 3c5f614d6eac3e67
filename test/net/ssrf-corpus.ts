/**
 * URL forms that must never lead the gateway to a loopback, private, link-local or otherwise
 * non-public destination. `refused` ones point at the canary's port P and must be refused before
 * any connection (at creation too); `redirect` ones name a public-looking host (served from
 * loopback by the test's agent) whose answer redirects to a refused form: they are accepted when
 * created, and the redirect must not be followed to the canary.
 */
export interface CorpusEntry {
  url: string;
  kind: 'refused' | 'redirect';
  /** What the form tries. */
  why: string;
}

/** Public-looking names of the fake resolver and the addresses they resolve to. */
export const FAKE_DNS: Record<string, string[]> = {
  'loopback.attacker-dns.com': ['127.0.0.1'],
  'metadata.attacker-dns.com': ['169.254.169.254'],
  'intranet.attacker-dns.com': ['10.1.2.3'],
  'cgnat.attacker-dns.com': ['100.64.0.7'],
  'mixed.attacker-dns.com': ['93.184.215.14', '127.0.0.1'],
  'v6-loopback.attacker-dns.com': ['::1'],
  'v6-mapped.attacker-dns.com': ['::ffff:127.0.0.1'],
  'v6-compatible.attacker-dns.com': ['::7f00:1'],
  'v6-nat64.attacker-dns.com': ['64:ff9b::a9fe:a9fe'],
  'v6-ula.attacker-dns.com': ['fd00::2'],
  'v6-link-local.attacker-dns.com': ['fe80::1'],
  'empty.attacker-dns.com': [],
};

/** Targets the public-looking redirector sends its visitors to (P: the canary's port). */
function redirectTargets(p: number): string[] {
  return [
    `http://127.0.0.1:${p}/`,
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://[::127.0.0.1]:${p}/`,
    `http://localhost:${p}/`,
    `http://loopback.attacker-dns.com:${p}/`,
    `http://2130706433:${p}/`,
    `http://169.254.169.254:${p}/latest/meta-data/`,
    `http://[64:ff9b::7f00:1]:${p}/`,
  ];
}

/** The redirector's host names, each redirecting to one target (by the Host it was asked for). */
export function redirectHosts(p: number): Map<string, string> {
  return new Map(redirectTargets(p).map((target, i) => [`r${i}.public-docs.com`, target]));
}

/** The public address the redirector's names resolve to (a documentation-free, routable one). */
export const PUBLIC_ADDRESS = '93.184.215.14';

/** Every corpus URL: `p` is the canary's port, `r` the redirector's. */
export function ssrfCorpus(p: number, r: number): CorpusEntry[] {
  const refused = (why: string, ...urls: string[]): CorpusEntry[] => urls.map((url) => ({ url, kind: 'refused', why }));
  return [
    ...refused(
      'IPv4 loopback, spelled every way the URL parser accepts',
      `http://127.0.0.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://127.1:${p}/`,
      `http://127.0.1:${p}/`,
      `http://0177.1:${p}/`,
      `http://127.000.000.001:${p}/`,
      `http://127.0.0.1.:${p}/`,
      `http://127.255.255.254:${p}/`,
      `HTTP://127.0.0.1:${p}/`,
      `http://127.0.0.1:${p}/#fragment`,
      `http://127.0.0.1:${p}#@public-docs.com/`,
      `http://127.0.0.1:${p}\\@public-docs.com/`,
      `http://127.0.0.1:${p}/?next=https://public-docs.com/`,
    ),
    ...refused(
      'other non-public IPv4',
      `http://0.0.0.0:${p}/`,
      `http://0:${p}/`,
      `http://10.0.0.1:${p}/`,
      `http://172.16.0.1:${p}/`,
      `http://192.168.0.1:${p}/`,
      `http://169.254.169.254:${p}/latest/meta-data/`,
      `http://100.64.0.1:${p}/`,
      `http://192.0.0.170:${p}/`,
      `http://198.18.0.1:${p}/`,
      `http://192.0.2.2:${p}/`,
      `http://224.0.0.1:${p}/`,
      `http://255.255.255.255:${p}/`,
      `http://240.0.0.1:${p}/`,
    ),
    ...refused(
      'IPv6 outside global unicast',
      `http://[::1]:${p}/`,
      `http://[::]:${p}/`,
      `http://[0:0:0:0:0:0:0:1]:${p}/`,
      `http://[fe80::1]:${p}/`,
      `http://[fc00::1]:${p}/`,
      `http://[fd00::2]:${p}/`,
      `http://[fec0::1]:${p}/`,
      `http://[ff02::1]:${p}/`,
      `http://[100::1]:${p}/`,
      `http://[2001:db8::1]:${p}/`,
      `http://[3fff::1]:${p}/`,
    ),
    ...refused(
      'IPv4 embedded in IPv6, judged by the IPv4 inside',
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::FFFF:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[::127.0.0.1]:${p}/`,
      `http://[::7f00:1]:${p}/`,
      `http://[::a9fe:a9fe]:${p}/`,
      `http://[::ffff:a9fe:a9fe]:${p}/`,
      `http://[::ffff:10.0.0.1]:${p}/`,
      `http://[::ffff:0:7f00:1]:${p}/`,
      `http://[64:ff9b::7f00:1]:${p}/`,
      `http://[64:ff9b::a9fe:a9fe]:${p}/`,
      `http://[64:ff9b:1::5db8:d70e]:${p}/`,
      `http://[2002:7f00:1::]:${p}/`,
      `http://[2002:a9fe:a9fe::1]:${p}/`,
      `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${p}/`,
    ),
    ...refused(
      'local-only names, whatever a resolver says',
      `http://localhost:${p}/`,
      `http://LOCALHOST:${p}/`,
      `http://localhost.:${p}/`,
      `http://api.localhost:${p}/`,
      `http://printer.local:${p}/`,
      `http://metadata.google.internal:${p}/`,
      `http://router.home.arpa:${p}/`,
      `http://localhost.localdomain:${p}/`,
    ),
    ...refused(
      'names resolving to non-public addresses, or to none',
      ...Object.keys(FAKE_DNS).map((name) => `http://${name}:${p}/`),
      `http://LOOPBACK.Attacker-DNS.com.:${p}/`,
      `http://unresolvable.attacker-dns.com:${p}/`,
    ),
    ...refused(
      'userinfo that looks like a public host',
      `http://public-docs.com@127.0.0.1:${p}/`,
      `http://public-docs.com:443@[::ffff:127.0.0.1]:${p}/`,
    ),
    ...[...redirectHosts(p).keys()].map((host): CorpusEntry => ({
      url: `http://${host}:${r}/`,
      kind: 'redirect',
      why: 'a public-looking site redirecting',
    })),
  ];
}
