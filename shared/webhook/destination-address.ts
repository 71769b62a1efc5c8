import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF guard of webhook destinations: HTTPS only, and a host resolving to any address that
 * is not public is refused (private, loopback, link-local, cloud metadata, ULA, unspecified,
 * multicast, reserved, and IPv4 embedded in IPv6 forms of those). It runs at creation and again
 * before every delivery, and the delivery connects to the address checked here, so a DNS answer
 * changed in between (rebinding) cannot redirect it.
 *
 * `allowLocal` (the local platform's `WEBHOOK_ALLOW_LOCAL_DESTINATIONS`) admits http:// and
 * loopback addresses, for a developer's own receiver; other private ranges stay refused.
 */
const refusedRanges = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  refusedRanges.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  refusedRanges.addSubnet(network, prefix, 'ipv6');
}

const loopbackRanges = new BlockList();
loopbackRanges.addSubnet('127.0.0.0', 8, 'ipv4');
loopbackRanges.addAddress('::1', 'ipv6');

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address, if it is one. */
const embeddedIpv4 = (address: string): string | undefined => {
  const match = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const [high, low] = [Number.parseInt(hex[1] as string, 16), Number.parseInt(hex[2] as string, 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
};

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Whether a destination may be reached at `address` (an IP literal). */
export const judgeAddress = (address: string, allowLocal: boolean): AddressVerdict => {
  const family = isIP(address);
  if (family === 0) return { allowed: false, reason: `${address} is not an IP address` };
  const ipv4 = family === 6 ? embeddedIpv4(address) : address;
  const [value, type] = ipv4 ? [ipv4, 'ipv4' as const] : [address, 'ipv6' as const];
  if (loopbackRanges.check(value, type)) {
    return allowLocal ? { allowed: true } : { allowed: false, reason: 'loopback addresses are refused' };
  }
  if (refusedRanges.check(value, type)) return { allowed: false, reason: `${address} is not a public address` };
  return { allowed: true };
};

export interface CheckedDestination {
  url: URL;
  /** The vetted address the delivery connects to. */
  address: string;
  family: 4 | 6;
}

export class RefusedDestinationError extends Error {}

/** The destination URL's scheme and literal form; throws `RefusedDestinationError` with the reason. */
export const parseDestinationUrl = (raw: string, allowLocal: boolean): URL => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedDestinationError('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowLocal && url.protocol === 'http:')) {
    throw new RefusedDestinationError('must be an https:// URL');
  }
  if (url.username || url.password) throw new RefusedDestinationError('must not carry credentials');
  if (!url.hostname) throw new RefusedDestinationError('must name a host');
  return url;
};

/**
 * Resolves the destination's host and checks every address it resolves to: a host that
 * answers with one private address among public ones is refused.
 */
export const checkDestination = async (raw: string, allowLocal: boolean): Promise<CheckedDestination> => {
  const url = parseDestinationUrl(raw, allowLocal);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let resolved: { address: string; family: number }[];
  try {
    resolved = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new RefusedDestinationError(`host ${host} does not resolve`);
  }
  if (resolved.length === 0) throw new RefusedDestinationError(`host ${host} does not resolve`);
  for (const { address } of resolved) {
    const verdict = judgeAddress(address, allowLocal);
    if (!verdict.allowed)
      throw new RefusedDestinationError(`host ${host} resolves to a refused address: ${verdict.reason}`);
  }
  const [first] = resolved as [{ address: string; family: number }];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
};
