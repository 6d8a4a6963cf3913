// Content-Disposition for a file of any name (RFC 6266): `filename=` with an ASCII stand-in for
// clients that read only that, and `filename*=UTF-8''…` (RFC 5987) with the name as stored. A raw
// non-Latin-1 name in a header made Node refuse the answer (a 500 for a file named "€.pdf"). And
// the origin a client reached the API at, for the links of what it downloads.
import { storableText } from '../shared/text';

// eslint-disable-next-line no-control-regex -- control characters cannot travel in a header
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** The header value that offers `name` as a download (`attachment`) or shows it (`inline`). */
export function contentDisposition(type: 'attachment' | 'inline', name: string): string {
  const exact = storableText(name).replace(CONTROL, '_').trim() || 'download';
  const ascii = exact
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  if (ascii === exact) return `${type}; filename="${ascii}"`;
  return `${type}; filename="${ascii}"; filename*=UTF-8''${rfc5987(exact)}`;
}

/** Percent-encodes all but RFC 5987's attr-chars. */
function rfc5987(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The address a client reached the API at (scheme and host), for links it reads away from it. */
export function requestOrigin(req: { protocol: string; get(name: string): string | undefined }): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
