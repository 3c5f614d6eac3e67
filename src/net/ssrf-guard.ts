import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import type * as GotModule from 'got';
import ipaddr from 'ipaddr.js';
import { lazyModule } from '../lazy-module.ts';

/**
 * A destination the server must not reach on a user's behalf. Its message is the same whether the
 * host is a private address, resolves to one, is a reserved name or does not resolve at all, so
 * that answers cannot be used to map internal DNS; the cause (a DNS error, say) is kept for logs.
 */
export class ForbiddenDestinationError extends Error {
  override name = 'ForbiddenDestinationError';

  constructor(host: string, options?: ErrorOptions) {
    super(`${host} is not a public address`, options);
  }
}

/**
 * The one answer to a webhook or url source URL whose host is a private address, resolves to one or
 * does not resolve: telling these apart would let owners map the internal network's DNS.
 */
export const NOT_PUBLIC_URL = 'url must point to a public address on the internet.';

/**
 * How outgoing requests find and reach hosts: the system resolver (`dns.lookup`, so /etc/hosts and
 * the search domains apply) and Node's global agents, unless a test injects others.
 */
export interface Egress {
  /** Every address a host name resolves to. */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /** The agents got sends requests through; Node's global agents when absent. */
  agents?: { http?: HttpAgent; https?: HttpsAgent };
}

/** The system's resolver and agents. */
export const systemEgress: Egress = {
  resolve: (hostname) =>
    new Promise((resolve, reject) =>
      dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
    ),
};

const cidr = (range: string) => ipaddr.parseCIDR(range) as [ipaddr.IPv6, number];
/** IPv6 destinations come from global unicast only… */
const GLOBAL_UNICAST = cidr('2000::/3');
/** …minus its special-purpose blocks: IETF protocol assignments, documentation, AS112. */
const SPECIAL_GLOBAL = ['2001::/23', '2001:db8::/32', '3fff::/20', '2620:4f:8000::/48'].map(cidr);
const NAT64 = cidr('64:ff9b::/96');
const LOCAL_NAT64 = cidr('64:ff9b:1::/48');

/**
 * Names that never lead to the public internet: localhost (RFC 6761), mDNS's `local`, `home.arpa`,
 * ICANN's private-use `internal`, and the conventional `localdomain`, with their subdomains.
 */
const LOCAL_NAMES = ['localhost', 'local', 'home.arpa', 'internal', 'localdomain'];

/**
 * True for public unicast addresses only. IPv4: not loopback, private, link-local, CGNAT, reserved,
 * documentation, multicast and the like. IPv6: global unicast (2000::/3) outside its special blocks;
 * an address that embeds an IPv4 address (IPv4-mapped, IPv4-compatible, SIIT, NAT64 64:ff9b::/96,
 * 6to4, Teredo) is judged by the IPv4 inside it, so `::127.0.0.1` or `::a9fe:a9fe` is not public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return isPublicIPv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.length > 0 && embedded.every(isPublicIPv4);
  return v6.match(GLOBAL_UNICAST) && !SPECIAL_GLOBAL.some((range) => v6.match(range));
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/** The IPv4 addresses an IPv6 address carries (both ends of a Teredo one); undefined when none. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  // ::a.b.c.d (IPv4-compatible; `::` and `::1` fall here too) and ::ffff:a.b.c.d (IPv4-mapped).
  if (zeros(0, 5) && (p[5] === 0 || p[5] === 0xffff)) return [v4(p[6]!, p[7]!)];
  // ::ffff:0:a.b.c.d (SIIT, RFC 6145) and 64:ff9b::a.b.c.d (NAT64's well-known prefix).
  if ((zeros(0, 4) && p[4] === 0xffff && p[5] === 0) || address.match(NAT64)) return [v4(p[6]!, p[7]!)];
  // A local-use NAT64 prefix leads into someone's own network, whatever it embeds.
  if (address.match(LOCAL_NAT64)) return [];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  // Teredo: the server's address, and the client's, stored inverted.
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
  return undefined;
}

/** A URL's host as the guard judges it: without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Refuses a host without resolving it: a literal address that is not public, a numeric form that
 * is not a plain address, a local-only name. Host names that pass still need their addresses
 * checked ({@link guardedLookup}, {@link assertPublicDestination}).
 */
export function assertPublicHost(host: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  if (isIP(host) !== 0 || ipaddr.isValid(host)) {
    if (isIP(host) === 0 || !isPublicAddress(host)) throw new ForbiddenDestinationError(host);
    return;
  }
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (name === '' || LOCAL_NAMES.some((local) => name === local || name.endsWith(`.${local}`))) {
    throw new ForbiddenDestinationError(host);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` replacement for HTTP clients: resolves the host and refuses it unless every address
 * is public, then hands the checked addresses to the socket, so the connection goes exactly where
 * the check looked (no second resolution for DNS rebinding to exploit). A name that does not resolve
 * is refused alike (code `EFORBIDDEN`).
 */
export function guardedLookup(allowPrivate: boolean, egress: Egress = systemEgress) {
  return function lookup(hostname: string, options: LookupOptions, callback: LookupCallback) {
    const refuse = (cause?: unknown) =>
      callback(Object.assign(new ForbiddenDestinationError(hostname, { cause }), { code: 'EFORBIDDEN' }), '');
    try {
      assertPublicHost(hostname, allowPrivate);
    } catch {
      return refuse();
    }
    egress.resolve(hostname).then(
      (addresses) => {
        const family = { 4: 4, 6: 6, IPv4: 4, IPv6: 6 }[options.family ?? 0];
        const list = addresses.filter((entry) => family === undefined || entry.family === family);
        if (list.length === 0 || (!allowPrivate && !list.every((entry) => isPublicAddress(entry.address)))) {
          return refuse();
        }
        if (options.all) return callback(null, list);
        return callback(null, list[0]!.address, list[0]!.family);
      },
      (error: NodeJS.ErrnoException) => (allowPrivate ? callback(error, '') : refuse(error)),
    );
  };
}

/**
 * Checks a URL's host before it is stored: a literal address must be public, a name must resolve, and
 * only to public addresses. Throws {@link ForbiddenDestinationError} alike for every refusal.
 */
export async function assertPublicDestination(url: URL, allowPrivate: boolean, egress = systemEgress): Promise<void> {
  if (allowPrivate) return;
  const host = hostOf(url);
  assertPublicHost(host, false);
  if (isIP(host) !== 0) return;
  let addresses: LookupAddress[];
  try {
    addresses = await egress.resolve(host);
  } catch (error) {
    throw new ForbiddenDestinationError(host, { cause: error });
  }
  if (addresses.length === 0 || !addresses.every((entry) => isPublicAddress(entry.address))) {
    throw new ForbiddenDestinationError(host);
  }
}

/** got's `agent` option for an egress: its agents, or none (Node's global ones). */
export function gotAgents(egress: Egress): { agent: NonNullable<Egress['agents']> } | Record<string, never> {
  return egress.agents ? { agent: egress.agents } : {};
}

// got, for every server-side request (each one goes through this guard), imported on the first one:
// the CLI loads the modules that send but never sends, and got is about 40 ms of its start-up.
const gotLibrary = lazyModule('got', () => import('got'));

/** The got library, once imported. */
export function loadGot(): Promise<typeof GotModule> {
  return gotLibrary.load();
}
