// What a reviewer sends the research workflow, and the checks its update validators run. Plain
// code with no zod: a workflow evaluates its imports each time one starts, and building zod and
// these schemas cost a sixth of the workflow thread's CPU. The API checks the same rules with the
// zod schemas in update-schemas.ts (which the OpenAPI document shows);
// test/unit/update-checks.test.ts holds the two to the same answers and the same values.
import { DOMAIN_PATTERN } from './domains';

/** Longest reviewer feedback or clarification answer the workflow keeps. */
export const MESSAGE_TEXT_MAX = 4_000;
/** A step id the user may give: what the planner's ids look like. */
export const STEP_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;
const STEP_TITLE_MAX = 200;
const STEP_DEPENDS_MAX = 12;
const BAN_DOMAINS_MAX = 20;
const MUST_READ_MAX = 10;
const URL_MAX = 2_000;
const COLLECTION_NAME_MAX = 100;

export interface ApprovePlan {
  planVersion: number;
}
export interface RevisePlan {
  planVersion: number;
  feedback: string;
}
export interface AnswerClarification {
  answer: string;
}
/** A step the user adds to a running research (the planner's step shape). */
export interface SteerStep {
  id: string;
  title: string;
  description: string;
  type: 'research' | 'processing';
  needSearch: boolean;
  dependsOn: string[];
}
/** Steering a running research: what the user changes, one thing per message. */
export type Steer =
  /** Guidance every later model call of the run receives ("focus on costs in Europe"). */
  | { kind: 'guidance'; text: string }
  /** Stop researching: running steps answer with what they have, pending ones are skipped, the report is written. */
  | { kind: 'wrapUp' }
  /** Domains (and their subdomains) the rest of the run leaves out: searches, crawls and the report. */
  | { kind: 'banDomains'; domains: string[] }
  /** Pages the research must read (a new step reads them) and collections its knowledge search covers from now on. */
  | { kind: 'mustRead'; urls: string[]; collections: string[] }
  | { kind: 'addStep'; step: SteerStep }
  | { kind: 'dropStep'; stepId: string }
  | { kind: 'editStep'; stepId: string; description: string };

/** The answer to a steering update: what was changed, and the plan version it made. */
export interface SteerAnswer {
  kind: Steer['kind'];
  accepted: true;
  planVersion?: number;
}

/** A checked message with its defaults filled and its text trimmed, or why it is refused
 *  (`path: reason`, joined by "; ", as the API words zod's issues). */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export function checkApprovePlan(m: unknown): Checked<ApprovePlan> {
  return run((r) => {
    const o = r.object(m, '');
    return o && { planVersion: r.positiveInt(o.planVersion, 'planVersion')! };
  });
}

export function checkRevisePlan(m: unknown): Checked<RevisePlan> {
  return run((r) => {
    const o = r.object(m, '');
    if (!o) return undefined;
    const planVersion = r.positiveInt(o.planVersion, 'planVersion')!;
    return { planVersion, feedback: r.text(o.feedback, 'feedback', { max: MESSAGE_TEXT_MAX, empty: 'feedback must not be empty' })! };
  });
}

export function checkAnswerClarification(m: unknown): Checked<AnswerClarification> {
  return run((r) => {
    const o = r.object(m, '');
    return o && { answer: r.text(o.answer, 'answer', { max: MESSAGE_TEXT_MAX, empty: 'answer must not be empty' })! };
  });
}

const STEER_KINDS = ['guidance', 'wrapUp', 'banDomains', 'mustRead', 'addStep', 'dropStep', 'editStep'] as const;

export function checkSteer(m: unknown): Checked<Steer> {
  return run((r): Steer | undefined => {
    const o = r.object(m, '');
    if (!o) return undefined;
    const kind = o.kind as Steer['kind'];
    if (!STEER_KINDS.includes(kind)) return r.fail('kind', `expected one of ${STEER_KINDS.join(', ')}`);
    switch (kind) {
      case 'guidance':
        r.only(o, ['kind', 'text'], '');
        return { kind, text: r.text(o.text, 'text', { max: MESSAGE_TEXT_MAX, empty: 'guidance must not be empty' })! };
      case 'wrapUp':
        r.only(o, ['kind'], '');
        return { kind };
      case 'banDomains': {
        r.only(o, ['kind', 'domains'], '');
        const domains = r.list(o.domains, 'domains', { min: 1, max: BAN_DOMAINS_MAX }, (v, path) => {
          const d = r.text(v, path, { min: 0, max: Infinity });
          const lower = d?.toLowerCase();
          return lower === undefined || DOMAIN_PATTERN.test(lower)
            ? lower
            : r.fail(path, 'a domain such as "example.com" (no scheme, port or path)');
        });
        return { kind, domains: domains! };
      }
      case 'mustRead': {
        r.only(o, ['kind', 'urls', 'collections'], '');
        const urls = r.list(o.urls ?? [], 'urls', { max: MUST_READ_MAX }, (v, path) => r.httpUrl(v, path));
        const collections = r.list(o.collections ?? [], 'collections', { max: MUST_READ_MAX }, (v, path) =>
          r.text(v, path, { trim: false, max: COLLECTION_NAME_MAX }),
        );
        if (r.failed || urls!.length + collections!.length > 0) return { kind, urls: urls!, collections: collections! };
        return r.fail('', 'give at least one URL or collection');
      }
      case 'addStep':
        r.only(o, ['kind', 'step'], '');
        return { kind, step: checkStep(r, o.step)! };
      case 'dropStep':
        r.only(o, ['kind', 'stepId'], '');
        return { kind, stepId: r.text(o.stepId, 'stepId', { trim: false, max: Infinity })! };
      case 'editStep':
        r.only(o, ['kind', 'stepId', 'description'], '');
        return {
          kind,
          stepId: r.text(o.stepId, 'stepId', { trim: false, max: Infinity })!,
          description: r.text(o.description, 'description', { max: MESSAGE_TEXT_MAX })!,
        };
    }
  });
}

function checkStep(r: Reader, v: unknown): SteerStep | undefined {
  const o = r.object(v, 'step');
  if (!o) return undefined;
  r.only(o, ['id', 'title', 'description', 'type', 'needSearch', 'dependsOn'], 'step');
  const id = r.text(o.id, 'step.id', { trim: false, max: Infinity });
  if (id !== undefined && !STEP_ID_PATTERN.test(id)) r.fail('step.id', 'step id must be 1-32 lowercase letters, digits or "-"');
  const type = o.type ?? 'research';
  if (type !== 'research' && type !== 'processing') r.fail('step.type', 'expected "research" or "processing"');
  const needSearch = o.needSearch ?? true;
  if (typeof needSearch !== 'boolean') r.fail('step.needSearch', 'expected a boolean');
  return {
    id: id!,
    title: r.text(o.title, 'step.title', { max: STEP_TITLE_MAX })!,
    description: r.text(o.description, 'step.description', { max: MESSAGE_TEXT_MAX })!,
    type: type as SteerStep['type'],
    needSearch: needSearch as boolean,
    dependsOn: r.list(o.dependsOn ?? [], 'step.dependsOn', { max: STEP_DEPENDS_MAX }, (d, path) =>
      r.text(d, path, { trim: false, min: 0, max: Infinity }),
    )!,
  };
}

/** Runs a check: its value when nothing failed, else every reason. */
function run<T>(check: (r: Reader) => T | undefined): Checked<T> {
  const r = new Reader();
  const value = check(r);
  return r.failed || value === undefined ? { ok: false, error: r.issues.join('; ') || 'input: invalid' } : { ok: true, value };
}

/** Reads an untrusted value, noting each problem with its path. */
class Reader {
  readonly issues: string[] = [];
  get failed(): boolean {
    return this.issues.length > 0;
  }
  fail(path: string, reason: string): undefined {
    this.issues.push(`${path || 'input'}: ${reason}`);
    return undefined;
  }
  object(v: unknown, path: string): Record<string, unknown> | undefined {
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : this.fail(path, 'expected an object');
  }
  /** Refuses keys a strict message does not have. */
  only(o: Record<string, unknown>, keys: readonly string[], path: string): void {
    const extra = Object.keys(o).filter((k) => !keys.includes(k));
    if (extra.length) this.fail(path, `unrecognized key(s): ${extra.join(', ')}`);
  }
  positiveInt(v: unknown, path: string): number | undefined {
    return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : this.fail(path, 'expected a positive integer');
  }
  text(v: unknown, path: string, o: { max: number; min?: number; trim?: boolean; empty?: string }): string | undefined {
    if (typeof v !== 'string') return this.fail(path, 'expected a string');
    const t = o.trim === false ? v : v.trim();
    const min = o.min ?? 1;
    if (t.length < min) return this.fail(path, o.empty ?? `at least ${min} character(s)`);
    return t.length > o.max ? this.fail(path, `at most ${o.max} characters`) : t;
  }
  list<T>(v: unknown, path: string, o: { max: number; min?: number }, item: (v: unknown, path: string) => T | undefined): T[] | undefined {
    if (!Array.isArray(v)) return this.fail(path, 'expected an array');
    if (v.length < (o.min ?? 0)) return this.fail(path, `at least ${o.min} item(s)`);
    if (v.length > o.max) return this.fail(path, `at most ${o.max} items`);
    const out = v.map((x, i) => item(x, `${path}.${i}`));
    return out.every((x) => x !== undefined) ? (out as T[]) : undefined;
  }
  /** An absolute http(s) URL, written with "://" (as the API's z.url with an http protocol wants). */
  httpUrl(v: unknown, path: string): string | undefined {
    if (typeof v !== 'string') return this.fail(path, 'expected a string');
    const trimmed = v.trim();
    let ok = /^https?:\/\//i.test(trimmed);
    if (ok) {
      try {
        ok = /^https?:$/.test(new URL(trimmed).protocol);
      } catch {
        ok = false;
      }
    }
    if (!ok) return this.fail(path, 'an http or https URL');
    const value = trimmed.replace(/[\t\n\r]/g, '');
    return value.length > URL_MAX ? this.fail(path, `at most ${URL_MAX} characters`) : value;
  }
}
