import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';

/**
 * Fetching user-given URLs without becoming a proxy into the private network: only http(s), every address a
 * name resolves to must be public (checked inside the socket's own lookup, so a DNS answer cannot change
 * between check and connect), redirects re-checked hop by hop. URL_ALLOW lists hosts or CIDR ranges that
 * may be reached even though they are private (an intranet wiki, say).
 */
export interface FetchPolicy {
  enabled: boolean;
  allow: string[];
}

const refused = (url: string, why: string) => new AppError('invalid_request', `The URL ${url} cannot be fetched: ${why}`);

export function isAllowedAddress(address: string, host: string, allow: string[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  for (const entry of allow) {
    if (entry.toLowerCase() === host.toLowerCase()) return true;
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry);
        if (range.kind() === ip.kind() && ip.match([range, bits] as never)) return true;
      } else if (ipaddr.isValid(entry) && ipaddr.parse(entry).toString() === ip.toString()) return true;
    } catch {
      /* a malformed allow entry allows nothing */
    }
  }
  return ip.range() === 'unicast';
}

/** A socket lookup that refuses a name resolving to any address the policy does not allow (no DNS rebinding). */
export function guardedLookup(host: string, allow: string[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return (callback as (e: Error | null, a: string, f: number) => void)(err, '', 0);
      const list = addresses as { address: string; family: number }[];
      const bad = list.find((a) => !isAllowedAddress(a.address, host, allow));
      if (bad || !list.length) {
        const e = Object.assign(new Error(`address ${bad?.address ?? 'none'} is not public`), { code: 'EPRIVATE' });
        return (callback as (e: Error | null, a: string, f: number) => void)(e, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      return (callback as (e: null, a: string, f: number) => void)(null, list[0].address, list[0].family);
    });
  };
}

export interface Fetched {
  stream: Readable;
  name: string;
  type?: string;
  url: string;
}

export async function fetchUrl(raw: string, policy: FetchPolicy, signal?: AbortSignal, hops = 5): Promise<Fetched> {
  if (!policy.enabled) throw new AppError('forbidden', 'Fetching URLs is disabled on this server (URL_FETCH=off)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused(raw, 'it is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(raw, 'only http and https URLs are fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host) && !isAllowedAddress(host, host, policy.allow)) throw refused(raw, 'the address is not public');
  const mod = url.protocol === 'https:' ? https : http;
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = mod.get(url, { lookup: guardedLookup(host, policy.allow), signal, timeout: 30_000, headers: { 'user-agent': 'Quire' } }, resolve);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  }).catch((err: NodeJS.ErrnoException) => {
    throw refused(raw, err.code === 'EPRIVATE' ? 'the address is not public' : err.message);
  });
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400 && res.headers.location) {
    res.resume();
    if (hops <= 0) throw refused(raw, 'too many redirects');
    return fetchUrl(new URL(res.headers.location, url).toString(), policy, signal, hops - 1);
  }
  if (status !== 200) {
    res.resume();
    throw refused(raw, `the server answered ${status}`);
  }
  const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(res.headers['content-disposition'] ?? '');
  const last = decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? '') || url.hostname;
  return {
    stream: res,
    name: disposition ? decodeURIComponent(disposition[1]) : last,
    type: res.headers['content-type']?.split(';')[0].trim(),
    url: url.toString(),
  };
}

/** The address to connect to for a host, if every address it resolves to is allowed; else null. */
export async function resolveAllowedHost(host: string, policy: FetchPolicy): Promise<string | null> {
  const name = host.replace(/^\[|\]$/g, '');
  if (!policy.enabled) return null;
  if (isIP(name)) return isAllowedAddress(name, name, policy.allow) ? name : null;
  const found = await lookup(name, { all: true }).catch(() => []);
  if (!found.length || found.some((a) => !isAllowedAddress(a.address, name, policy.allow))) return null;
  return found[0].address;
}
