import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A destination that resolves to an address the server must not reach on a user's behalf. */
export class ForbiddenDestinationError extends Error {
  override name = 'ForbiddenDestinationError';
}

/**
 * True for public unicast addresses only: loopback, private, link-local, CGNAT, unique-local,
 * multicast, reserved and the like are refused, and an IPv4-mapped IPv6 address is judged by the
 * IPv4 address inside it.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` replacement for HTTP clients: resolves the host and refuses it unless every address
 * is public, then hands the checked address to the socket, so the connection goes exactly where the
 * check looked (no second resolution for DNS rebinding to exploit).
 */
export function guardedLookup(allowPrivate: boolean) {
  return function lookup(hostname: string, options: object, callback: LookupCallback): void {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses;
      const refused = list.find((entry) => !allowPrivate && !isPublicAddress(entry.address));
      if (refused || list.length === 0) {
        const reason = new ForbiddenDestinationError(`${hostname} resolves to a non-public address`);
        return callback(Object.assign(reason, { code: 'EFORBIDDEN' }), '');
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Checks a URL's host (a literal address, or every address it resolves to) before it is stored. */
export async function assertPublicDestination(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve, reject) =>
        dnsLookup(host, { all: true }, (error, list) =>
          error ? reject(error) : resolve(list.map((entry) => entry.address)),
        ),
      );
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    throw new ForbiddenDestinationError(`${host} resolves to a non-public address`);
  }
}
