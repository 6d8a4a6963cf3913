// What a reviewer sends the research workflow: each message's rules, written once as plain data
// (message-rules.ts says why without zod). The workflow's update validators check a message by
// them; update-schemas.ts builds the API's zod schemas from them, and
// test/unit/update-checks.test.ts holds the two to the same answers and the same values.
import { DOMAIN_PATTERN } from './domains';
import { checkMessage, type Checked, type ObjectRule, type Out, type UnionRule } from './message-rules';

export type { Checked };

/** Longest reviewer feedback or clarification answer the workflow keeps. */
export const MESSAGE_TEXT_MAX = 4_000;
/** A step id the user may give: what the planner's ids look like. */
export const STEP_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** A text the workflow keeps: trimmed, not empty, not too long. */
const message = (tooShort?: string) => ({ type: 'text', trim: true, min: 1, max: MESSAGE_TEXT_MAX, tooShort }) as const;
const planVersion = { type: 'positiveInt' } as const;
const object = <const F extends ObjectRule['fields']>(fields: F) => ({ type: 'object', fields }) as const;
/** One kind of steering message: its fields and nothing else. */
const variant = <const K extends string, const F extends ObjectRule['fields']>(kind: K, fields: F) =>
  ({ type: 'object', strict: true, fields: { kind: { type: 'literal', value: kind }, ...fields } }) as const;

export const APPROVE_PLAN = object({ planVersion });
export const ANSWER_CLARIFICATION = object({ answer: message('answer must not be empty') });

/** A step the user adds to a running research (the planner's step shape). */
const STEER_STEP = {
  type: 'object',
  strict: true,
  fields: {
    id: { type: 'text', pattern: { regex: STEP_ID_PATTERN, message: 'step id must be 1-32 lowercase letters, digits or "-"' } },
    title: { type: 'text', trim: true, min: 1, max: 200 },
    description: message(),
    type: { type: 'oneOf', values: ['research', 'processing'], default: 'research' },
    needSearch: { type: 'boolean', default: true },
    dependsOn: { type: 'list', item: { type: 'text' }, max: 12, default: [] },
  },
} as const satisfies ObjectRule;

/** A step named by its id. */
const stepId = { type: 'text', min: 1, max: 32 } as const;

/** One change a reviewer makes to the plan under review: a step's title, description, type or
 *  dependencies, a step removed, a step added (src/shared/plan-edits.ts applies them). */
export const PLAN_EDIT = {
  type: 'union',
  variants: [
    variant('setTitle', { stepId, title: STEER_STEP.fields.title }),
    variant('setDescription', { stepId, description: message('description must not be empty') }),
    variant('setType', { stepId, type: { type: 'oneOf', values: ['research', 'processing'] } }),
    variant('setDependencies', { stepId, dependsOn: { type: 'list', item: stepId, max: 12 } }),
    variant('remove', { stepId }),
    variant('add', { step: STEER_STEP }),
  ],
} as const satisfies UnionRule;

/** A plan sent back: feedback for the planner, edits made directly (no model call), or both. */
export const REVISE_PLAN = {
  type: 'object',
  fields: {
    planVersion,
    feedback: { type: 'text', trim: true, max: MESSAGE_TEXT_MAX, default: '' },
    edits: { type: 'list', item: PLAN_EDIT, max: 20, default: [] },
  },
  needsOneOf: { fields: ['feedback', 'edits'], message: "feedback must not be empty (or give the steps' edits)" },
} as const satisfies ObjectRule;

/** Steering a running research: what the user changes, one thing per message. */
export const STEER = {
  type: 'union',
  variants: [
    /** Guidance every later model call of the run receives ("focus on costs in Europe"). */
    variant('guidance', { text: message('guidance must not be empty') }),
    /** Stop researching: running steps answer with what they have, pending ones are skipped, the report is written. */
    variant('wrapUp', {}),
    /** Domains (and their subdomains) the rest of the run leaves out: searches, crawls and the report. */
    variant('banDomains', {
      domains: {
        type: 'list',
        item: {
          type: 'text',
          trim: true,
          lowerCase: true,
          pattern: { regex: DOMAIN_PATTERN, message: 'a domain such as "example.com" (no scheme, port or path)' },
        },
        min: 1,
        max: 20,
      },
    }),
    /** Pages the research must read (a running step reads them at its next round, or a new step
     *  does) and collections its knowledge search covers from now on. */
    {
      ...variant('mustRead', {
        urls: { type: 'list', item: { type: 'httpUrl', max: 2_000, message: 'an http or https URL' }, max: 10, default: [] },
        collections: { type: 'list', item: { type: 'text', min: 1, max: 100 }, max: 10, default: [] },
      }),
      needsOneOf: { fields: ['urls', 'collections'], message: 'give at least one URL or collection' },
    },
    variant('addStep', { step: STEER_STEP }),
    variant('dropStep', { stepId: { type: 'text', min: 1 } }),
    variant('editStep', { stepId: { type: 'text', min: 1 }, description: message() }),
  ],
} as const satisfies UnionRule;

export type ApprovePlan = Out<typeof APPROVE_PLAN>;
export type RevisePlan = Out<typeof REVISE_PLAN>;
export type AnswerClarification = Out<typeof ANSWER_CLARIFICATION>;
export type SteerStep = Out<typeof STEER_STEP>;
export type PlanEdit = Out<typeof PLAN_EDIT>;
export type Steer = Out<typeof STEER>;

/** The answer to a steering update: what was changed, and the plan version it made. */
export interface SteerAnswer {
  kind: Steer['kind'];
  accepted: true;
  planVersion?: number;
}

export const checkApprovePlan = (m: unknown): Checked<ApprovePlan> => checkMessage(APPROVE_PLAN, m);
export const checkRevisePlan = (m: unknown): Checked<RevisePlan> => checkMessage(REVISE_PLAN, m);
export const checkAnswerClarification = (m: unknown): Checked<AnswerClarification> => checkMessage(ANSWER_CLARIFICATION, m);
export const checkSteer = (m: unknown): Checked<Steer> => checkMessage(STEER, m);
