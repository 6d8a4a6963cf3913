// Text PostgreSQL refuses: a NUL (text and jsonb cannot hold U+0000) and a lone UTF-16 surrogate
// (not encodable as UTF-8: "invalid byte sequence" or "unsupported Unicode escape sequence").
// What a client sends with such a character is refused at the door (400, src/api/middleware/text.ts);
// what arrives with nobody to answer (pages, search results, files, model output) is cleaned here
// before it is stored. Plain functions, no zod: workflows may import them.

// Without the u flag a regex sees UTF-16 code units, so an unpaired half of a pair is one match.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Why the database would refuse `s`, or undefined when it would store it. */
export function unstorableText(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/** `s` as the database stores it: NULs dropped, lone surrogates replaced by U+FFFD. */
export function storableText(s: string): string {
  // eslint-disable-next-line no-control-regex -- the NUL is what this removes
  return unstorableText(s) === undefined ? s : s.replace(/\u0000/g, '').replace(LONE_SURROGATES, '\uFFFD');
}

/**
 * A value with every string in it (keys included) made storable, for JSON written to jsonb; plain
 * objects and arrays are copied, anything else (a Date, a Buffer) is kept as it is.
 */
export function storableValue<T>(value: T): T {
  return clean(value) as T;
}

function clean(v: unknown): unknown {
  if (typeof v === 'string') return storableText(v);
  if (Array.isArray(v)) return v.map(clean);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[storableText(k)] = clean(x);
    return out;
  }
  return v;
}

/** The first unstorable string in a parsed request part, with where it is ('question', 'steps.2.title'). */
export function findUnstorable(value: unknown, path: string[] = []): { path: string; reason: string } | undefined {
  if (typeof value === 'string') {
    const reason = unstorableText(value);
    return reason === undefined ? undefined : { path: path.join('.'), reason };
  }
  if (value && typeof value === 'object') {
    for (const [k, x] of Object.entries(value)) {
      const keyReason = unstorableText(k);
      if (keyReason !== undefined) return { path: [...path, k].join('.'), reason: `its name ${keyReason}` };
      const found = findUnstorable(x, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}

/** decodeURIComponent that answers `s` itself for a malformed escape ('%zz', '%E2%82'). */
export function decodeOrKeep(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
