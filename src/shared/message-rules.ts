// A message's rules as plain data, and the check that reads a message by them. The review and
// steering messages' rules are written once, in updates.ts: the workflow's update validators check
// them here, and update-schemas.ts builds the API's zod schemas (and the OpenAPI document) from
// them. No zod here: a workflow evaluates its imports each time one starts, and building zod
// schemas cost a sixth of the workflow thread's CPU.
import { plural } from './plural';

/** What one value must be. An httpUrl is absolute and written with "://", as zod's z.url wants. */
export type Rule =
  | { type: 'positiveInt' }
  | { type: 'boolean'; default?: boolean }
  | { type: 'literal'; value: string }
  | { type: 'oneOf'; values: readonly [string, ...string[]]; default?: string }
  | TextRule
  | { type: 'httpUrl'; max: number; message: string }
  | { type: 'list'; item: Rule; min?: number; max: number; default?: readonly [] }
  | ObjectRule
  | UnionRule;
/** A string, trimmed and lower-cased first when asked, then held to its length and pattern. */
export interface TextRule {
  type: 'text';
  /** What a missing value stands for. */
  default?: string;
  trim?: boolean;
  lowerCase?: boolean;
  min?: number;
  /** The reason given for a string shorter than `min`. */
  tooShort?: string;
  max?: number;
  pattern?: { regex: RegExp; message: string };
}
export interface ObjectRule {
  type: 'object';
  fields: Readonly<Record<string, Rule>>;
  /** Refuses keys the object does not have (else they are left out of the value). */
  strict?: boolean;
  /** At least one of these fields (lists or texts) must not be empty. */
  needsOneOf?: { fields: readonly string[]; message: string };
}
/** One of several objects, told apart by their `kind`. */
export type UnionRule = { type: 'union'; variants: readonly (ObjectRule & { fields: { kind: { type: 'literal'; value: string } } })[] };
type RuleOf<T extends Rule['type']> = Extract<Rule, { type: T }>;

/** The value a rule accepts, once checked (defaults filled). */
export type Out<R> = R extends { type: keyof Scalars }
  ? Scalars[R['type']]
  : R extends { value: infer V } | { values: readonly (infer V)[] }
    ? V
    : R extends { item: infer I }
      ? Out<I>[]
      : R extends { fields: infer F }
        ? { -readonly [K in keyof F]: Out<F[K]> }
        : R extends { variants: readonly (infer V)[] }
          ? OutOfEach<V>
          : never;
type Scalars = { positiveInt: number; boolean: boolean; text: string; httpUrl: string };
type OutOfEach<V> = V extends unknown ? Out<V> : never;

/** A checked message with its defaults filled and its text trimmed, or why it is refused
 *  (`path: reason`, joined by "; ", as the API words zod's issues). */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Checks an untrusted message against its rules, noting every problem with its path. */
export function checkMessage<R extends ObjectRule | UnionRule>(rule: R, m: unknown): Checked<Out<R>> {
  const issues: string[] = [];
  const value = read(rule, m, { path: '', issues });
  return issues.length ? { ok: false, error: issues.join('; ') } : { ok: true, value: value as Out<R> };
}

/** Where in the message a value is, and the problems noted so far. */
type At = { path: string; issues: string[] };
const fail = (at: At, reason: string): undefined => void at.issues.push(`${at.path || 'input'}: ${reason}`);
const inside = (at: At, key: string | number): At => ({ path: at.path ? `${at.path}.${key}` : String(key), issues: at.issues });

/** The checked value, or undefined once `at` has noted why not. */
function read(rule: Rule, v: unknown, at: At): unknown {
  const fallback = 'default' in rule ? rule.default : undefined;
  if (v === undefined && fallback !== undefined) return Array.isArray(fallback) ? [...fallback] : fallback;
  switch (rule.type) {
    case 'positiveInt':
      return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : fail(at, 'expected a positive integer');
    case 'boolean':
      return typeof v === 'boolean' ? v : fail(at, 'expected a boolean');
    case 'literal':
      return v === rule.value ? v : fail(at, `expected "${rule.value}"`);
    case 'oneOf':
      return rule.values.includes(v as string) ? v : fail(at, `expected ${rule.values.map((x) => `"${x}"`).join(' or ')}`);
    case 'text':
      return readText(rule, v, at);
    case 'httpUrl':
      return readHttpUrl(rule, v, at);
    case 'list':
      return readList(rule, v, at);
    case 'object':
      return readObject(rule, v, at);
    case 'union':
      return readUnion(rule, v, at);
  }
}

function readText(rule: TextRule, v: unknown, at: At): string | undefined {
  if (typeof v !== 'string') return fail(at, 'expected a string');
  const trimmed = rule.trim ? v.trim() : v;
  const t = rule.lowerCase ? trimmed.toLowerCase() : trimmed;
  if (t.length < (rule.min ?? 0)) return fail(at, rule.tooShort ?? `at least ${plural(rule.min ?? 0, 'character')}`);
  if (t.length > (rule.max ?? Infinity)) return fail(at, `at most ${rule.max} characters`);
  return !rule.pattern || rule.pattern.regex.test(t) ? t : fail(at, rule.pattern.message);
}

function readHttpUrl(rule: RuleOf<'httpUrl'>, v: unknown, at: At): string | undefined {
  if (typeof v !== 'string') return fail(at, 'expected a string');
  const trimmed = v.trim();
  let ok = /^https?:\/\//i.test(trimmed);
  try {
    ok &&= /^https?:$/.test(new URL(trimmed).protocol);
  } catch {
    ok = false;
  }
  if (!ok) return fail(at, rule.message);
  // z.url leaves out tabs and line breaks, as the URL parser does.
  const value = trimmed.replace(/[\t\n\r]/g, '');
  return value.length > rule.max ? fail(at, `at most ${rule.max} characters`) : value;
}

function readList(rule: RuleOf<'list'>, v: unknown, at: At): unknown[] | undefined {
  if (!Array.isArray(v)) return fail(at, 'expected an array');
  if (v.length < (rule.min ?? 0)) return fail(at, `at least ${plural(rule.min ?? 0, 'item')}`);
  if (v.length > rule.max) return fail(at, `at most ${rule.max} items`);
  const out = v.map((x, i) => read(rule.item, x, inside(at, i)));
  return out.every((x) => x !== undefined) ? out : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readObject(rule: ObjectRule, v: unknown, at: At): Record<string, unknown> | undefined {
  if (!isObject(v)) return fail(at, 'expected an object');
  const before = at.issues.length;
  const extra = rule.strict ? Object.keys(v).filter((k) => !Object.hasOwn(rule.fields, k)) : [];
  if (extra.length) fail(at, `unrecognized ${extra.length === 1 ? 'key' : 'keys'}: ${extra.join(', ')}`);
  const out = Object.fromEntries(Object.entries(rule.fields).map(([k, r]) => [k, read(r, v[k], inside(at, k))]));
  if (at.issues.length > before) return undefined;
  const needs = rule.needsOneOf;
  return !needs || needs.fields.some((k) => (out[k] as unknown[] | string).length > 0) ? out : fail(at, needs.message);
}

function readUnion(rule: UnionRule, v: unknown, at: At): Record<string, unknown> | undefined {
  if (!isObject(v)) return fail(at, 'expected an object');
  const variant = rule.variants.find((r) => r.fields.kind.value === v.kind);
  if (variant) return readObject(variant, v, at);
  return fail(inside(at, 'kind'), `expected one of ${rule.variants.map((r) => r.fields.kind.value).join(', ')}`);
}
