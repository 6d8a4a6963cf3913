// Banned domains: a domain bans itself and every subdomain ("example.com" bans "www.example.com",
// not "badexample.com").

/** A domain as the user may name it: lower-case labels, no scheme, port or path. */
export const DOMAIN_PATTERN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The banned domain `url` is on, or undefined (an unparsable URL is not on any). */
export function bannedDomainOf(url: string, banned: readonly string[]): string | undefined {
  if (!banned.length) return undefined;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return undefined;
  }
  return banned.find((d) => host === d || host.endsWith(`.${d}`));
}
