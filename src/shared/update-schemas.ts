// What a reviewer sends the research workflow, as the API checks it (and the OpenAPI document
// shows it): zod schemas built from the rules in updates.ts, which the workflow checks without zod.
// messages.ts re-exports these.
import { z } from 'zod';
import type { ObjectRule, Rule, TextRule } from './message-rules';
import { ANSWER_CLARIFICATION, APPROVE_PLAN, MESSAGE_TEXT_MAX, PLAN_EDIT, REVISE_PLAN, STEER, type SteerAnswer } from './updates';
import type * as Plain from './updates';

export { MESSAGE_TEXT_MAX, type SteerAnswer };

export const ApprovePlan = schemaOf(APPROVE_PLAN);
export type ApprovePlan = z.infer<typeof ApprovePlan>;
/** One change a reviewer makes to the plan under review. */
export const PlanEdit = schemaOf(PLAN_EDIT);
export type PlanEdit = z.infer<typeof PlanEdit>;
export const RevisePlan = schemaOf(REVISE_PLAN);
export type RevisePlan = z.infer<typeof RevisePlan>;
export const AnswerClarification = schemaOf(ANSWER_CLARIFICATION);
export type AnswerClarification = z.infer<typeof AnswerClarification>;
/** Steering a running research: what the user changes, one thing per message. */
export const Steer = schemaOf(STEER);
export type Steer = z.infer<typeof Steer>;
export type SteerInput = z.input<typeof Steer>;

function schemaOf<R extends Rule>(rule: R): ZodOf<R> {
  return build(rule) as unknown as ZodOf<R>;
}

function build(rule: Rule): z.ZodType {
  const schema = buildBase(rule);
  return 'default' in rule && rule.default !== undefined ? schema.default(rule.default) : schema;
}

function buildBase(rule: Rule): z.ZodType {
  switch (rule.type) {
    case 'positiveInt':
      return z.number().int().positive();
    case 'boolean':
      return z.boolean();
    case 'literal':
      return z.literal(rule.value);
    case 'oneOf':
      return z.enum(rule.values);
    case 'text':
      return buildText(rule);
    case 'httpUrl':
      return z.url({ protocol: /^https?$/, message: rule.message }).max(rule.max);
    case 'list': {
      const list = z.array(build(rule.item));
      return (rule.min === undefined ? list : list.min(rule.min)).max(rule.max);
    }
    case 'object':
      return buildObject(rule);
    case 'union':
      return z.discriminatedUnion('kind', rule.variants.map(buildObject) as [z.ZodObject, ...z.ZodObject[]]);
  }
}

function buildText(rule: TextRule): z.ZodString {
  let s = z.string();
  if (rule.trim) s = s.trim();
  if (rule.lowerCase) s = s.toLowerCase();
  if (rule.min !== undefined) s = s.min(rule.min, rule.tooShort);
  if (rule.max !== undefined) s = s.max(rule.max);
  return rule.pattern ? s.regex(rule.pattern.regex, rule.pattern.message) : s;
}

function buildObject(rule: ObjectRule): z.ZodObject {
  const shape = Object.fromEntries(Object.entries(rule.fields).map(([k, r]) => [k, build(r)]));
  const object = rule.strict ? z.object(shape).strict() : z.object(shape);
  const needs = rule.needsOneOf;
  return needs ? object.refine((m) => needs.fields.some((k) => (m[k] as unknown[] | string).length > 0), needs.message) : object;
}

/** The zod type of a rule's schema, as zod would type it written out by hand. */
type ZodOf<R> = R extends { default: unknown } ? z.ZodDefault<ZodBaseOf<R>> : ZodBaseOf<R>;
type ZodScalars = { positiveInt: z.ZodNumber; boolean: z.ZodBoolean; text: z.ZodString; httpUrl: z.ZodURL };
type ZodBaseOf<R> = R extends { type: keyof ZodScalars }
  ? ZodScalars[R['type']]
  : R extends { value: infer V extends string }
    ? z.ZodLiteral<V>
    : R extends { values: readonly (infer V extends string)[] }
      ? z.ZodEnum<{ [K in V]: K }>
      : R extends { item: infer I }
        ? z.ZodArray<ZodOf<I>>
        : R extends { fields: infer F }
          ? z.ZodObject<{ -readonly [K in keyof F]: ZodOf<F[K]> }, R extends { strict: true } ? z.core.$strict : z.core.$strip>
          : R extends { variants: infer V extends readonly unknown[] }
            ? z.ZodDiscriminatedUnion<{ -readonly [K in keyof V]: ZodOf<V[K]> }, 'kind'>
            : never;

// zod's types of the schemas and the workflow's plain types, read from the same rules by two
// mappings, describe the same messages. (One Assert each: an intersection of the answers would be
// never when one is false, and never passes.)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SchemasMatchTheWorkflowsTypes = [
  Assert<Same<ApprovePlan, Plain.ApprovePlan>>,
  Assert<Same<RevisePlan, Plain.RevisePlan>>,
  Assert<Same<PlanEdit, Plain.PlanEdit>>,
  Assert<Same<AnswerClarification, Plain.AnswerClarification>>,
  Assert<Same<Steer, Plain.Steer>>,
];
