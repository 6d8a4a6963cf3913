// What a reviewer sends the research workflow, checked by its update validators: the only schemas
// the workflow code builds, so they import nothing but zod (a workflow evaluates its imports each
// time one starts). messages.ts re-exports them with the views.
import { z } from 'zod';

/** Longest reviewer feedback or clarification answer the workflow keeps. */
export const MESSAGE_TEXT_MAX = 4_000;

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
