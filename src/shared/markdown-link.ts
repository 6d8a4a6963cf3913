// Links written into Markdown from text that came from outside (a source's URL and title, as a web
// page or a search result gave them): escaped so that they stay one link with plain text. A URL
// holding `)`, `]`, spaces, `<` or quotes used to end the link early and add its own link or markup
// to References and to the HTML, PDF and Office exports rendered from that Markdown.

// CommonMark lets a backslash escape any ASCII punctuation; these are the ones that make markup,
// and `:` `@` because GFM makes a link of a bare URL or address in text (www. is handled apart).
const MARKUP = /[\\`*_{}[\]()<>#!|~&"'$:@]/g;

/** Text shown as it is in Markdown: markup characters backslash-escaped, line breaks a space. */
export function markdownText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(MARKUP, '\\$&')
    .replace(/\b(www)\./gi, '$1\\.');
}

/**
 * An http(s) URL, or a path on this service (`/v1/collections/…`, how a knowledge-base passage is
 * cited), as a link destination: parsed and re-serialised, and past its origin every character that
 * could end or bend the destination percent-encoded. Undefined for anything else (another scheme, a
 * protocol-relative `//host`, not a URL), which then is no link.
 */
export function linkDestination(url: string): string | undefined {
  const raw = url.trim();
  const local = raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/\\');
  let u: URL;
  try {
    u = local ? new URL(raw, 'http://service.invalid') : new URL(raw);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (local && u.origin !== 'http://service.invalid') return undefined;
  const rest = u.href
    .slice(u.origin.length)
    .replace(/[\s()<>[\]"'\\`]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return local ? rest : u.origin + rest;
}

/** `[title](url)`, escaped; the title (or the URL) as plain text when the URL is not http(s). */
export function markdownLink(title: string, url: string): string {
  const label = markdownText(title.trim() || url);
  const to = linkDestination(url);
  return to ? `[${label}](${to})` : label;
}
