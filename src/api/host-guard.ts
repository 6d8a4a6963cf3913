// Who may talk to the API from a browser. An open API (no keys, on loopback) trusts whoever reaches
// it, and a browser reaches it on behalf of any web page: through DNS rebinding (a name of the
// attacker's that resolves to 127.0.0.1, so the page is "same-origin" with the API under that name)
// and through cross-site requests that need no answer to do harm (a no-cors POST that cancels a run).
// So: the Host header must name this machine (or an entry of API_ALLOWED_HOSTS), and a request that
// changes state must not come from another site (Origin, Sec-Fetch-Site). With keys there is no
// ambient credential a page could ride on, and a reverse proxy may put any Host in front: the Host
// is checked only when API_ALLOWED_HOSTS is set, and the origin not at all.
import type { RequestHandler } from 'express';
import { ApiError } from '../shared/errors';

export interface HostGuardSettings {
  /** The API runs without keys. */
  open: boolean;
  /** API_ALLOWED_HOSTS: `host` (any port) or `host:port` entries answered besides loopback names. */
  allowedHosts: string[];
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `host[:port]` of a Host header or an origin, lower-cased, IPv6 in brackets: [name, port]. */
export function splitHost(value: string): [string, string | undefined] {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(value.trim().toLowerCase());
  if (!m) return [value.toLowerCase(), undefined];
  return [m[1]!.replace(/\.$/, ''), m[2] || undefined];
}

/** Names only this machine resolves to itself: localhost (and names under it), 127.0.0.0/8, [::1]. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127(\.\d{1,3}){3}$/.test(name);
}

const sameHost = (a: string, b: string) => splitHost(a).join(':') === splitHost(b).join(':');

/** Is `host` an entry of API_ALLOWED_HOSTS (an entry without a port matches any)? */
function listed(host: string, allowed: string[]): boolean {
  const [name, port] = splitHost(host);
  return allowed.some((entry) => {
    const [n, p] = splitHost(entry);
    return n === name && (p === undefined || p === port);
  });
}

/** The address a request came in on, as a Host names it: the API's tools (MCP) call it back there, and
 *  an address, unlike a name, cannot be rebound. */
function localName(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain.includes(':') ? `[${plain}]` : plain;
}

/** Refuses a Host that is not this machine's (open) or not listed (API_ALLOWED_HOSTS set): 421. */
function checkHost(host: string | undefined, local: string | undefined, s: HostGuardSettings): void {
  if (!s.open && s.allowedHosts.length === 0) return;
  const name = host === undefined ? undefined : splitHost(host)[0];
  if (name !== undefined && (isLoopbackName(name) || name === local || listed(host!, s.allowedHosts))) return;
  const shown = host === undefined ? 'no Host header' : `Host "${host.slice(0, 100)}"`;
  throw new ApiError(
    421,
    'host_not_allowed',
    `${shown} is not a name this API answers to: ${s.open ? 'without keys it answers only to localhost, 127.0.0.1 and [::1]' : 'it answers only to loopback names'}` +
      ' and the names in API_ALLOWED_HOSTS',
  );
}

/** `host[:port]` of an http(s) Origin; undefined for `null` or anything else. */
function hostOf(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host : undefined;
  } catch {
    return undefined;
  }
}

/** Refuses a state-changing request a browser sent for a page of another site (open mode only): 403. */
function checkOrigin(
  method: string,
  host: string | undefined,
  origin: string | undefined,
  fetchSite: string | undefined,
  s: HostGuardSettings,
): void {
  if (!s.open || !STATE_CHANGING.has(method)) return;
  const originHost = hostOf(origin);
  // A page the operator listed (this API's own page behind a proxy that rewrites Host, another page
  // of theirs), whatever the browser calls the relation.
  if (originHost !== undefined && listed(originHost, s.allowedHosts)) return;
  // 'none': the person typed or bookmarked it; 'same-origin': the page this server serves.
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    throw new ApiError(
      403,
      'cross_site',
      `a ${fetchSite} ${method} is refused: without keys the API takes changes only from its own page or from outside a browser`,
    );
  }
  if (origin === undefined) return;
  // The page's own origin (never another loopback port: that is another local server's page).
  if (originHost !== undefined && host !== undefined && sameHost(originHost, host)) return;
  throw new ApiError(
    403,
    'cross_site',
    `a ${method} from origin "${origin.slice(0, 100)}" is refused: without keys the API takes changes only from its own page or from outside a browser`,
  );
}

/** The Host and cross-site checks, before anything else the API serves (health checks excepted). */
export function hostGuard(s: HostGuardSettings): RequestHandler {
  return (req, _res, next) => {
    const host = req.headers.host;
    checkHost(host, localName(req.socket.localAddress), s);
    checkOrigin(req.method, host, req.get('origin'), req.get('sec-fetch-site')?.toLowerCase(), s);
    next();
  };
}
