import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** What the keyword `private` stands for: loopback, RFC 1918, unique-local and link-local ranges. */
const PRIVATE_RANGES = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
] as const;

/** A `TRUSTED_PROXIES` entry that is neither an address, a CIDR range nor `private`. */
export class TrustedProxiesError extends Error {
  override name = 'TrustedProxiesError';
}

/**
 * The reverse proxies (load balancers) whose `X-Forwarded-For` the gateway believes. A request's
 * client address is its socket's peer, unless that peer is trusted: then it is the rightmost
 * `X-Forwarded-For` entry that is not itself trusted. Entries further left were written by whoever
 * that client is, so they are never believed. With no trusted proxy the header is ignored.
 */
export class TrustedProxies {
  /** Trusts nobody: the client address is always the socket's peer. */
  static readonly none = new TrustedProxies([]);

  private readonly ranges: Array<[Address, number]>;

  private constructor(ranges: Array<[Address, number]>) {
    this.ranges = ranges;
  }

  /**
   * Parses a comma-separated list of IP addresses, CIDR ranges and the keyword `private`; an empty
   * list trusts nobody. Throws {@link TrustedProxiesError} naming the first bad entry.
   */
  static parse(list: string): TrustedProxies {
    const ranges: Array<[Address, number]> = [];
    for (const entry of list.split(',').map((part) => part.trim())) {
      if (entry === '') continue;
      if (entry.toLowerCase() === 'private') ranges.push(...PRIVATE_RANGES.map((range) => ipaddr.parseCIDR(range)));
      else ranges.push(parseRange(entry));
    }
    return new TrustedProxies(ranges);
  }

  /** Whether an address (IPv4-mapped IPv6 is taken as the IPv4 inside) is a trusted proxy. */
  trusts(address: string): boolean {
    const parsed = parseAddress(address);
    return parsed !== undefined && this.trustsParsed(parsed);
  }

  /** The client address of a request that came from `peer` with the given `X-Forwarded-For`. */
  clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    let client = peer === undefined ? undefined : parseAddress(peer);
    if (client === undefined) return peer ?? 'unknown';
    if (!this.trustsParsed(client)) return client.toString();
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '')).split(',');
    for (const hop of hops.reverse()) {
      const parsed = parseAddress(hop.trim());
      // Garbage in the chain ends the walk: the nearest hop that can be named stands for the client.
      if (parsed === undefined) break;
      client = parsed;
      if (!this.trustsParsed(parsed)) break;
    }
    return client.toString();
  }

  private trustsParsed(address: Address): boolean {
    return this.ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
  }
}

function parseAddress(text: string): Address | undefined {
  // node:net's check is strict (no `0x7f.1` or `127.1` shorthands, which ipaddr.js also accepts).
  return isIP(text) === 0 ? undefined : ipaddr.process(text);
}

function parseRange(entry: string): [Address, number] {
  const bad = new TrustedProxiesError(`"${entry}" is not an IP address, a CIDR range or private`);
  const [address = '', bits, ...rest] = entry.split('/');
  const parsed = parseAddress(address);
  if (parsed === undefined || rest.length > 0) throw bad;
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  if (bits === undefined) return [parsed, max];
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(prefix <= max)) throw bad;
  return [parsed, prefix];
}
