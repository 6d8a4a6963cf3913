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
  clarificationQuestion: z
    .string()
    .nullable()
    .describe('One question to the user when the request is too ambiguous to research and clarification is allowed; null otherwise'),
});
export type CoordinatorDecision = z.infer<typeof CoordinatorDecision>;

/** Rewrite and expansion: a precise research question and diverse search queries. */
export const QueryExpansion = z.object({
  researchQuestion: z.string().min(1).describe('The user question rewritten as one precise research question'),
  queries: z.array(z.string().min(1)).min(1).describe('Diverse web search queries, each a few words'),
});
export type QueryExpansion = z.infer<typeof QueryExpansion>;

/** A short text that cites sources by their ids, e.g. "[S3f9a01c2]". */
export const CitedText = z.object({
  text: z.string().min(1).describe('Markdown; cite sources by their ids in square brackets, e.g. [S3f9a01c2]'),
  summary: z.string().min(1).describe('Two or three plain sentences summarising the text'),
});
export type CitedText = z.infer<typeof CitedText>;

export const StepType = z.enum(['research', 'processing']);
export const PlanStep = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'step id must be 1-32 lowercase letters, digits or "-"'),
  title: z.string().min(1),
  description: z.string().min(1),
  type: StepType,
  needSearch: z.boolean(),
  dependsOn: z.array(z.string()).describe('ids of earlier steps whose results this step needs'),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const Plan = z.object({
  title: z.string().min(1),
  thought: z.string().describe('Why this plan answers the question'),
  locale: Locale,
  hasEnoughContext: z.boolean().describe('True only if the background already answers the question fully'),
  steps: z.array(PlanStep),
});
export type Plan = z.infer<typeof Plan>;

/** Checks the schema cannot express: step count, unique ids, known and acyclic dependencies. */
export function planProblems(plan: Plan, maxSteps: number): string[] {
  const problems: string[] = [];
  if (!plan.hasEnoughContext && plan.steps.length === 0) problems.push('steps: a plan without enough context needs at least one step');
  if (plan.steps.length > maxSteps) problems.push(`steps: at most ${maxSteps} steps are allowed, got ${plan.steps.length}`);
  const ids = new Set<string>();
  for (const s of plan.steps) {
    if (ids.has(s.id)) problems.push(`steps: duplicate step id "${s.id}"`);
    ids.add(s.id);
  }
  for (const s of plan.steps) {
    for (const d of s.dependsOn) {
      if (d === s.id) problems.push(`steps.${s.id}.dependsOn: a step cannot depend on itself`);
      else if (!ids.has(d)) problems.push(`steps.${s.id}.dependsOn: unknown step id "${d}"`);
    }
  }
  // Kahn's algorithm: whatever cannot be ordered is in a cycle.
  const indeg = new Map(plan.steps.map((s) => [s.id, s.dependsOn.filter((d) => ids.has(d) && d !== s.id).length]));
  const queue = [...indeg].filter(([, n]) => n === 0).map(([id]) => id);
  let ordered = 0;
  while (queue.length) {
    const id = queue.shift()!;
    ordered++;
    for (const s of plan.steps) {
      if (s.dependsOn.includes(id)) {
        const n = indeg.get(s.id)! - 1;
        indeg.set(s.id, n);
        if (n === 0) queue.push(s.id);
      }
    }
  }
  if (ordered < plan.steps.length && problems.length === 0) problems.push('steps: dependsOn forms a cycle');
  return problems;
}

export const JudgeVerdict = z.object({
  passed: z.boolean(),
  feedback: z.string().describe('What is missing or wrong; empty when passed'),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

export const ReportDraft = z.object({
  title: z.string().min(1),
  markdown: z.string().min(1).describe('The report body in Markdown, citing sources as [n] with the numbers given'),
});
export type ReportDraft = z.infer<typeof ReportDraft>;

/** What a page offers for a goal: the evidence quoted or closely paraphrased, and a summary. */
export const PageExtract = z.object({
  relevant: z.boolean().describe('Whether the page has anything that serves the goal'),
  evidence: z.string().describe('The passages that serve the goal, quoted or closely paraphrased, with figures and dates'),
  summary: z.string().describe('One or two sentences: what the page says about the goal'),
});
export type PageExtract = z.infer<typeof PageExtract>;

/** Arguments of the researcher's tools, validated before any tool runs. */
export const WebSearchArgs = z.object({ queries: z.array(z.string().trim().min(1)).min(1).max(5).describe('1-5 web search queries') }).strict();
export const CrawlArgs = z
  .object({
    urls: z.array(z.string().url()).min(1).max(5).describe('1-5 URLs from search results to read'),
    goal: z.string().min(1).describe('What to look for on these pages'),
  })
  .strict();
export const KnowledgeSearchArgs = z.object({ query: z.string().trim().min(1) }).strict();

export type ToolCall =
  | { id: string; name: 'web_search'; args: z.infer<typeof WebSearchArgs> }
  | { id: string; name: 'crawl'; args: z.infer<typeof CrawlArgs> }
  | { id: string; name: 'knowledge_search'; args: z.infer<typeof KnowledgeSearchArgs> }
  | { id: string; name: 'mcp'; server: string; tool: string; args: Record<string, unknown> };

/** The coder's program for a processing step. */
export const CodeDraft = z.object({
  code: z.string().min(1).describe('A complete Python 3 program; reads its data from /work, writes charts and tables to /output'),
  explanation: z.string().describe('Two sentences: what the program computes and how'),
});
export type CodeDraft = z.infer<typeof CodeDraft>;

/** Schemas an LLM activity may be asked to produce, by name: workflows pass names, not schemas. */
export const StructuredSchemas = {
  CodeDraft,
  PageExtract,
  CoordinatorDecision,
  QueryExpansion,
  CitedText,
  Plan,
  JudgeVerdict,
  ReportDraft,
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
  status: z.enum(['completed', 'cancelled']),
  outcome: z.enum(['answered_directly', 'report', 'cancelled_at_review']),
  locale: z.string(),
  /** At most SUMMARY_MAX_CHARS; the full text lives in PostgreSQL. */
  summary: z.string().max(SUMMARY_MAX_CHARS),
  usage: Usage,
  planVersion: z.number().int().optional(),
  steps: z.array(z.object({ id: z.string(), status: z.string(), attempts: z.number().int() })).optional(),
  references: z.number().int().optional(),
  removedCitations: z.array(z.number().int()).optional(),
  notes: z.array(z.string()),
});
export type ResearchResult = z.infer<typeof ResearchResult>;

export function summarize(text: string, max = SUMMARY_MAX_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
