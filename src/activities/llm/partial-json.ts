// The text of one string field of a JSON object that is still being written (a structured answer
// read as it streams): `{"title": "A", "markdown": "## Key po` gives "## Key po" for `markdown`.
// Only the object's own keys count (a key-like text inside another string does not), escapes are
// decoded, and an escape cut off at the end waits for the next chunk.

export interface PartialField {
  text: string;
  /** Whether the string's closing quote has arrived. */
  complete: boolean;
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A JSON string from its opening quote at `at`: its text so far, where it ends (or -1), whether it is cut off. */
function readString(raw: string, at: number): { text: string; end: number } {
  let text = '';
  let i = at + 1;
  while (i < raw.length) {
    const c = raw[i]!;
    if (c === '"') return { text, end: i + 1 };
    if (c !== '\\') {
      text += c;
      i++;
      continue;
    }
    const e = raw[i + 1];
    if (e === undefined) break;
    if (e === 'u') {
      const hex = raw.slice(i + 2, i + 6);
      if (hex.length < 4) break;
      const code = Number.parseInt(hex, 16);
      if (Number.isNaN(code)) return { text, end: -1 };
      text += String.fromCharCode(code);
      i += 6;
      continue;
    }
    text += ESCAPES[e] ?? e;
    i += 2;
  }
  return { text, end: -1 };
}

/** Skips a value that is not the field's (a string, a number, a nested object or list): where it ends, or -1. */
function skipValue(raw: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < raw.length) {
    const c = raw[i]!;
    if (c === '"') {
      const s = readString(raw, i);
      if (s.end < 0) return -1;
      i = s.end;
      if (depth === 0) return i;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && c === ',') return i;
    i++;
  }
  return -1;
}

/** The field's text so far, when its value (a string) has begun; undefined before that. */
export function partialField(raw: string, field: string): PartialField | undefined {
  const i = valueOf(raw, field);
  if (i === undefined || raw[i] !== '"') return undefined;
  const value = readString(raw, i);
  return { text: value.text, complete: value.end >= 0 };
}

/** The elements of the field's list (of the object's own keys) that were written whole: those of
 *  an answer cut off inside the list. Undefined when the list has not begun. */
export function completeItems(raw: string, field: string): unknown[] | undefined {
  let i = valueOf(raw, field);
  if (i === undefined || raw[i] !== '[') return undefined;
  const items: unknown[] = [];
  i++;
  for (;;) {
    while (i < raw.length && /[\s,]/.test(raw[i]!)) i++;
    if (i >= raw.length || raw[i] === ']') return items;
    // An element still being written has no end yet.
    const end = skipValue(raw, i);
    if (end < 0) return items;
    try {
      items.push(JSON.parse(raw.slice(i, end)));
    } catch {
      return items;
    }
    i = end;
  }
}

/** Where the value of one of the object's own keys begins, once it has. */
function valueOf(raw: string, field: string): number | undefined {
  let i = raw.indexOf('{');
  if (i < 0) return undefined;
  i++;
  for (;;) {
    while (i < raw.length && /[\s,]/.test(raw[i]!)) i++;
    if (raw[i] !== '"') return undefined;
    const key = readString(raw, i);
    if (key.end < 0) return undefined;
    i = key.end;
    while (i < raw.length && /\s/.test(raw[i]!)) i++;
    if (raw[i] !== ':') return undefined;
    i++;
    while (i < raw.length && /\s/.test(raw[i]!)) i++;
    if (i >= raw.length) return undefined;
    if (key.text === field) return i;
    const next = skipValue(raw, i);
    if (next < 0) return undefined;
    i = next;
  }
}
