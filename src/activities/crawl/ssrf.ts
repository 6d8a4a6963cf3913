// The SSRF guard. Every address a crawl connects to is checked after DNS resolution, on every
// redirect hop: only public unicast addresses pass, unless the host is on the explicit allow list
// (CRAWL_ALLOW_HOSTS, for development and tests).
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class BlockedError extends Error {
  override readonly name = 'BlockedError';
}

/** The ports an outside URL may use unless its host is allowed: plain HTTP and HTTPS. */
export const WEB_PORTS = [80, 443];

export interface GuardPolicy {
  /** `host` (any port) or `host:port` entries that skip the address and port checks. */
  allowHosts: string[];
  allowedPorts: number[];
}

/** The reason an address is not public unicast, or undefined when it is. */
export function addressProblem(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries.
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range === 'unicast') {
    // ipaddr.js calls a few special-use blocks unicast; keep them out as well.
    if (ip.kind() === 'ipv4' && ip.match(ipaddr.parseCIDR('0.0.0.0/8') as [ipaddr.IPv4, number])) return `${address} is in 0.0.0.0/8`;
    return undefined;
  }
  return `${address} is a ${range} address`;
}

export function hostAllowed(policy: GuardPolicy, hostname: string, port: number): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return policy.allowHosts.some((entry) => {
    const e = entry.toLowerCase();
    return e === h || e === `${h}:${port}`;
  });
}

/** Checks scheme and port of a URL, and its host when the host is an IP literal. */
export function checkUrl(policy: GuardPolicy, url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BlockedError(`scheme ${url.protocol} is not allowed (http and https only)`);
  if (url.username || url.password) throw new BlockedError('URLs with credentials are not crawled');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (hostAllowed(policy, url.hostname, port)) return;
  if (!policy.allowedPorts.includes(port))
    throw new BlockedError(`port ${port} is not allowed (allowed: ${policy.allowedPorts.join(', ')})`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) {
    const problem = addressProblem(host);
    if (problem) throw new BlockedError(`blocked address: ${problem}`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A dns.lookup replacement for the HTTP agent: resolves, then refuses the connection if any
 * resolved address is not public (so a name that resolves to 127.0.0.1 or 169.254.169.254 is
 * caught at connect time, after redirects, whatever the URL looked like).
 */
export function guardedLookup(policy: GuardPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      if (!hostAllowed(policy, hostname, 0) && !policy.allowHosts.some((e) => e.toLowerCase().startsWith(`${hostname.toLowerCase()}:`))) {
        for (const a of list) {
          const problem = addressProblem(a.address);
          if (problem)
            return callback(
              Object.assign(new BlockedError(`blocked address: ${hostname} resolves to ${problem}`), { code: 'EBLOCKED' }),
              [],
            );
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
