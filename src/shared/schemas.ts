import { z } from 'zod';
import { SUMMARY_MAX_CHARS } from './constants';

/** A duration such as `90s`, `30m`, `24h`, `3d` (the units Temporal's timers accept). */
export const Duration = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'expected a duration such as "90s", "30m", "24h" or "3d"');
export type Duration = z.infer<typeof Duration>;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export function durationToMs(d: Duration): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(d.trim());
  if (!m) throw new Error(`not a duration: ${d}`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** BCP 47 language tag, e.g. `en-US`, `zh-CN`, `de`. */
export const Locale = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'expected a BCP 47 language tag such as "en-US"');

/** Tunables of one run. They travel in the workflow input: workflows never read the environment. */
export const ResearchOptions = z
  .object({
    autoAcceptPlan: z.boolean().default(false),
    maxSteps: z.number().int().min(1).max(12).default(4),
    maxConcurrentSteps: z.number().int().min(1).max(16).default(4),
    maxReflectionAttempts: z.number().int().min(0).max(5).default(2),
    maxPlanRevisions: z.number().int().min(0).max(10).default(3),
    maxClarifications: z.number().int().min(0).max(3).default(0),
    queryCount: z.number().int().min(1).max(10).default(3),
    maxToolRounds: z.number().int().min(1).max(30).default(8),
    maxCodeAttempts: z.number().int().min(1).max(10).default(3),
    reviewTimeout: Duration.default('24h'),
    onReviewTimeout: z.enum(['approve', 'cancel']).default('approve'),
    locale: Locale.optional(),
    maxTokens: z.number().int().positive().optional(),
    maxCostUsd: z.number().positive().optional(),
    /** Wall-clock budget from the start of the run. */
    deadline: Duration.optional(),
  })
  .strict();
export type ResearchOptions = z.infer<typeof ResearchOptions>;

/** Body of `POST /v1/research`. */
export const ResearchRequest = z
  .object({
    question: z.string().trim().min(1, 'question must not be empty').max(4_000, 'question is longer than 4000 characters'),
    options: ResearchOptions.partial().strict().optional(),
  })
  .strict();
export type ResearchRequest = z.infer<typeof ResearchRequest>;

/** Input of the research workflow: the id is the workflow id, known before the run starts. */
export const ResearchInput = z.object({
  question: z.string(),
  tenant: z.string(),
  options: ResearchOptions,
});
export type ResearchInput = z.infer<typeof ResearchInput>;

export const RunStatus = z.enum(['running', 'awaiting_review', 'completed', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;
export const Phase = z.enum(['coordinating', 'planning', 'reviewing', 'researching', 'reporting', 'done']);
export type Phase = z.infer<typeof Phase>;

/** Coordinator's answer: small talk is answered directly, research goes on. */
export const CoordinatorDecision = z.object({
  action: z.enum(['answer_directly', 'research']),
  locale: Locale.describe('BCP 47 tag of the language the user wrote in, e.g. en-US'),
  directAnswer: z
    .string()
    .nullable()
    .describe('The short reply when action is answer_directly; null otherwise'),
  researchTopic: z
    .string()
    .nullable()
    .describe('The research task restated in one sentence when action is research; null otherwise'),
});
export type CoordinatorDecision = z.infer<typeof CoordinatorDecision>;

/** Schemas an LLM activity may be asked to produce, by name: workflows pass names, not schemas. */
export const StructuredSchemas = {
  CoordinatorDecision,
} as const;
export type StructuredSchemaName = keyof typeof StructuredSchemas;
export type StructuredOutput<N extends StructuredSchemaName> = z.infer<(typeof StructuredSchemas)[N]>;

export const Usage = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;
export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, costUsd: 0 };
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    costUsd: Math.round((a.costUsd + b.costUsd) * 1e6) / 1e6,
  };
}

export const ResearchResult = z.object({
  id: z.string(),
  status: RunStatus,
  outcome: z.enum(['answered_directly', 'research_accepted']),
  locale: z.string(),
  /** At most SUMMARY_MAX_CHARS; the full text lives in PostgreSQL. */
  summary: z.string().max(SUMMARY_MAX_CHARS),
  usage: Usage,
});
export type ResearchResult = z.infer<typeof ResearchResult>;

export function summarize(text: string, max = SUMMARY_MAX_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
