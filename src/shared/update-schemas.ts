// What a reviewer sends the research workflow, as the API checks it (and the OpenAPI document
// shows it). The workflow checks the same rules without zod, in updates.ts: a workflow evaluates its
// imports each time one starts, and zod cost a sixth of the workflow thread's CPU. The unit test
// test/unit/update-checks.test.ts holds the two to the same answers. messages.ts re-exports these.
import { z } from 'zod';
import { DOMAIN_PATTERN } from './domains';
import { MESSAGE_TEXT_MAX, STEP_ID_PATTERN, type SteerAnswer } from './updates';
import type * as Plain from './updates';

export { MESSAGE_TEXT_MAX, type SteerAnswer };

export const ApprovePlan = z.object({ planVersion: z.number().int().positive() });
export type ApprovePlan = z.infer<typeof ApprovePlan>;

export const RevisePlan = z.object({
  planVersion: z.number().int().positive(),
  feedback: z.string().trim().min(1, 'feedback must not be empty').max(MESSAGE_TEXT_MAX),
});
export type RevisePlan = z.infer<typeof RevisePlan>;

export const AnswerClarification = z.object({
  answer: z.string().trim().min(1, 'answer must not be empty').max(MESSAGE_TEXT_MAX),
});
export type AnswerClarification = z.infer<typeof AnswerClarification>;

/** A step the user adds to a running research (the planner's step shape). */
const SteerStep = z
  .object({
    id: z.string().regex(STEP_ID_PATTERN, 'step id must be 1-32 lowercase letters, digits or "-"'),
    title: z.string().trim().min(1).max(200),
    description: z.string().trim().min(1).max(MESSAGE_TEXT_MAX),
    type: z.enum(['research', 'processing']).default('research'),
    needSearch: z.boolean().default(true),
    dependsOn: z.array(z.string()).max(12).default([]),
  })
  .strict();

/** Steering a running research: what the user changes, one thing per message. */
export const Steer = z.discriminatedUnion('kind', [
  /** Guidance every later model call of the run receives ("focus on costs in Europe"). */
  z.object({ kind: z.literal('guidance'), text: z.string().trim().min(1, 'guidance must not be empty').max(MESSAGE_TEXT_MAX) }).strict(),
  /** Stop researching: running steps answer with what they have, pending ones are skipped, the report is written. */
  z.object({ kind: z.literal('wrapUp') }).strict(),
  /** Domains (and their subdomains) the rest of the run leaves out: searches, crawls and the report. */
  z
    .object({
      kind: z.literal('banDomains'),
      domains: z
        .array(z.string().trim().toLowerCase().regex(DOMAIN_PATTERN, 'a domain such as "example.com" (no scheme, port or path)'))
        .min(1)
        .max(20),
    })
    .strict(),
  /** Pages the research must read (a running step reads them at its next round, or a new step
   *  does) and collections its knowledge search covers from now on. */
  z
    .object({
      kind: z.literal('mustRead'),
      urls: z
        .array(z.url({ protocol: /^https?$/, message: 'an http or https URL' }).max(2_000))
        .max(10)
        .default([]),
      collections: z.array(z.string().min(1).max(100)).max(10).default([]),
    })
    .strict()
    .refine((m) => m.urls.length + m.collections.length > 0, 'give at least one URL or collection'),
  z.object({ kind: z.literal('addStep'), step: SteerStep }).strict(),
  z.object({ kind: z.literal('dropStep'), stepId: z.string().min(1) }).strict(),
  z
    .object({ kind: z.literal('editStep'), stepId: z.string().min(1), description: z.string().trim().min(1).max(MESSAGE_TEXT_MAX) })
    .strict(),
]);
export type Steer = z.infer<typeof Steer>;
export type SteerInput = z.input<typeof Steer>;

// The zod schemas and the workflow's plain types describe the same messages.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SchemasMatchTheWorkflowsTypes = Assert<
  Same<ApprovePlan, Plain.ApprovePlan> &
    Same<RevisePlan, Plain.RevisePlan> &
    Same<AnswerClarification, Plain.AnswerClarification> &
    Same<Steer, Plain.Steer>
>;
