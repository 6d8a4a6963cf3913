import { z } from 'zod';
import { PlanEdit as PlanEditSchema } from './update-schemas';
import { NotifyWhen } from './changes';
import { DEFAULT_MAX_OUTAGE, LLM_ROLES, SUMMARY_MAX_CHARS } from './constants';
import { canonicalLocale } from './locale';
import { RunUser, UserId, UserWords } from './memory';

/** A duration such as `90s`, `30m`, `24h`, `3d` (the units Temporal's timers accept). */
export const Duration = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'expected a duration such as "90s", "30m", "24h" or "3d"');
export type Duration = z.infer<typeof Duration>;

/** BCP 47 language tag of a real language, e.g. `en-US`, `zh-CN`, `de` ("yes" or "rnl" are not). */
export const Locale = z
  .string()
  .trim()
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'expected a BCP 47 language tag such as "en-US"')
  .refine((tag) => canonicalLocale(tag) !== undefined, 'expected the BCP 47 tag of a known language, such as "en-US"');

/** Tunables of one run. They travel in the workflow input: workflows never read the environment. */
/** How much work a run does: a preset for the numbers below (explicit numbers win). */
export const Effort = z.enum(['quick', 'standard', 'deep']);
export type Effort = z.infer<typeof Effort>;
/** How long the report is: `long` is written section by section (outline, then each section). */
export const ReportLength = z.enum(['brief', 'standard', 'long']);
export type ReportLength = z.infer<typeof ReportLength>;

/** What a run tells its webhook about. */
export const WebhookEvent = z.enum(['review_needed', 'report_ready', 'run_failed']);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/** Where a run's notifications go (signed with the server's WEBHOOK_SECRET, which never travels). */
export const Webhook = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'webhook.url must be an http or https URL' }).max(2_000),
    /** Absent: all of them. */
    events: z.array(WebhookEvent).min(1).max(3).optional(),
  })
  .strict();
export type Webhook = z.infer<typeof Webhook>;

/** A calendar date, `YYYY-MM-DD`. */
const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date such as "2026-01-31"');

/**
 * How recent the sources must be: a period before the run starts, or dates. Passed to providers
 * that filter by date and enforced on publication dates where they are known.
 */
export const TimeRange = z.union([
  z.enum(['day', 'week', 'month', 'year']),
  z
    .object({ from: IsoDate.optional(), to: IsoDate.optional() })
    .strict()
    .refine((r) => r.from !== undefined || r.to !== undefined, 'timeRange needs from, to or both')
    .refine((r) => !r.from || !r.to || r.from <= r.to, 'timeRange.from is after timeRange.to'),
]);
export type TimeRange = z.infer<typeof TimeRange>;

/** How the research is organised: a plan reviewed up front (with gap reflection after the team),
 *  or a supervisor that decides after each wave of steps whether to delegate more. */
export const ResearchMode = z.enum(['plan', 'supervisor']);

/** A model name as a client gives it (printable ASCII, no spaces). */
export const ModelName = z
  .string()
  .trim()
  .regex(/^[\x21-\x7e]{1,200}$/, 'model must be a model name');

/** A run's models by role (`{"researcher": "gpt-4.1-mini", "reporter": "gpt-4.1"}`): each must
 *  be one the server allows (its roles' and fallback's models, LLM_REQUEST_MODELS, and what its
 *  provider lists). */
export const RunModels = z.partialRecord(z.enum(LLM_ROLES), ModelName).refine((m) => Object.keys(m).length > 0, {
  message: 'name a model for at least one role',
});
export type RunModels = z.infer<typeof RunModels>;
export type ResearchMode = z.infer<typeof ResearchMode>;

export const ResearchOptions = z
  .object({
    /** Fills the options it covers (EFFORT_PRESETS) where the request does not set them. */
    effort: Effort.optional(),
    reportLength: ReportLength.default('standard'),
    autoAcceptPlan: z.boolean().default(false),
    maxSteps: z.number().int().min(1).max(12).default(4),
    maxConcurrentSteps: z.number().int().min(1).max(16).default(4),
    maxReflectionAttempts: z.number().int().min(0).max(5).default(2),
    maxPlanRevisions: z.number().int().min(0).max(10).default(3),
    maxClarifications: z.number().int().min(0).max(3).default(0),
    queryCount: z.number().int().min(1).max(10).default(3),
    maxToolRounds: z.number().int().min(1).max(30).default(8),
    maxCodeAttempts: z.number().int().min(1).max(10).default(3),
    /** Rounds of gap reflection after the team: follow-up steps while the findings leave gaps. */
    maxResearchLoops: z.number().int().min(0).max(3).default(1),
    reviewTimeout: Duration.default('24h'),
    onReviewTimeout: z.enum(['approve', 'cancel']).default('approve'),
    locale: Locale.optional(),
    maxTokens: z.number().int().positive().optional(),
    maxCostUsd: z.number().positive().optional(),
    /** `low`: the run's tasks wait behind the tenant's normal ones (batch work, evaluations). */
    priority: z.enum(['normal', 'low']).optional(),
    /** Wall-clock budget of the research, counted from when it starts (after the plan review). */
    deadline: Duration.optional(),
    /** How long an outage of one outside system (LLM, PostgreSQL, search, Docker) is waited out
     *  before the step or run that needs it fails, saying which one was down. */
    maxOutage: Duration.default(DEFAULT_MAX_OUTAGE),
    /** Knowledge base collections (ids) the run searches; absent: a decision step picks from the
     *  tenant's collections by their descriptions; empty: none. */
    collections: z
      .array(z.string().regex(/^C[0-9a-f]{16}$/, 'not a collection id'))
      .max(20)
      .optional(),
    /** POSTed to when the plan needs a review, the report is ready or the run failed. */
    webhook: Webhook.optional(),
    /** Only sources of this period (see TimeRange). */
    timeRange: TimeRange.optional(),
    /** Search providers this run may use (a subset of the configured ones); absent: the tenant's
     *  choice, else all configured. */
    searchProviders: z
      .array(z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, 'not a provider name'))
      .min(1)
      .max(12)
      .optional(),
    /** Absent: `plan`. */
    researchMode: ResearchMode.optional(),
    /** The model of each role this run names (others: the server's); each one the server allows. */
    models: RunModels.optional(),
    /** False: the run neither reads nor teaches the user's memory (absent: on, unless the key is off). */
    memory: z.boolean().optional(),
  })
  .strict();
export type ResearchOptions = z.infer<typeof ResearchOptions>;

/** What each effort sets: search queries, plan size, tool rounds, reruns, gap loops, report length,
 *  and for a deep run the supervisor. */
export const EFFORT_PRESETS = {
  quick: { queryCount: 2, maxSteps: 2, maxToolRounds: 4, maxReflectionAttempts: 0, maxResearchLoops: 0, reportLength: 'brief' },
  standard: { queryCount: 3, maxSteps: 4, maxToolRounds: 8, maxReflectionAttempts: 2, maxResearchLoops: 1, reportLength: 'standard' },
  // A deep run is led by the supervisor (think, delegate a wave, decide when done); `researchMode:
  // "plan"` in the request keeps gap reflection instead.
  deep: {
    queryCount: 5,
    maxSteps: 8,
    maxToolRounds: 14,
    maxReflectionAttempts: 3,
    maxResearchLoops: 2,
    reportLength: 'long',
    researchMode: 'supervisor',
  },
} as const satisfies Record<Effort, Partial<ResearchOptions>>;

/** The request's options with its effort preset under them: what the request sets wins. */
export function withEffort<T extends { effort?: Effort | undefined }>(options: T): T {
  return options.effort ? { ...EFFORT_PRESETS[options.effort], ...options } : options;
}

function presetFirst(options: unknown): unknown {
  if (typeof options !== 'object' || options === null || !('effort' in options)) return options;
  const effort = Effort.safeParse(options.effort);
  return effort.success ? withEffort({ ...options, effort: effort.data }) : options;
}

/** Body of `POST /v1/research`. */
export const ResearchRequest = z
  .object({
    question: z.string().max(4_000, 'question is longer than 4000 characters').trim().min(1, 'question must not be empty'),
    // The effort preset goes under the options before the defaults fill the rest.
    options: z.preprocess(presetFirst, ResearchOptions.partial().strict()).optional(),
    /** A session (POST /v1/sessions): the run sees the session's earlier questions and reports. */
    sessionId: z
      .string()
      .regex(/^session-[0-9a-f]{16}$/, 'not a session id')
      .optional(),
    /** Whose memory the run reads and teaches (absent: the API key's owner; another user of the
     *  tenant: admin keys only, src/api/auth.ts memoryUserOf). */
    userId: UserId.optional(),
  })
  .strict();
export type ResearchRequest = z.infer<typeof ResearchRequest>;

/** How fast outside calls are retried, and the run's other timings the operator sets (RETRY_* and
 *  the variables named below), not per request. */
/** A tenant name: in API keys, search attributes and ids. */
export const TENANT_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export const RetrySettings = z.object({
  initialInterval: Duration,
  maximumInterval: Duration,
  /** How long an LLM call's worker may stay silent before another worker gets the call (default 15s). */
  heartbeatTimeout: Duration.optional(),
  /** How long a page that needs a browser waits for a worker with one (BROWSER_WAIT; absent: 1 minute). */
  browserWait: Duration.optional(),
  /** How often a run waiting for review on a versioned worker looks for a newer target build
   *  (NEW_BUILD_CHECK; absent: 5 minutes). */
  newBuildCheck: Duration.optional(),
});
export type RetrySettings = z.infer<typeof RetrySettings>;

/** Input of the research workflow: the id is the workflow id, known before the run starts. */
export const ResearchInput = z.object({
  question: z.string(),
  tenant: z.string(),
  options: ResearchOptions,
  /** Absent: DEFAULT_RETRY. */
  retry: RetrySettings.optional(),
  sessionId: z.string().optional(),
  /** Set on runs a schedule starts: the report then says what changed since the schedule's previous one. */
  scheduleId: z.string().optional(),
  /** A schedule's runs with `on_change` call `report_ready` only when the report found a change (absent: always). */
  notify: NotifyWhen.optional(),
  /** The user whose memory the run reads and teaches, as the API resolved it (absent in runs started
   *  before user memory, and in a schedule's runs that name no user: no memory). */
  user: RunUser.optional(),
  /** Runs of the tenant researching at once (TENANT_MAX_RUNS): the run waits for a slot in its tenant's queue. */
  admission: z.object({ maxRuns: z.number().int().positive(), queueId: z.string() }).optional(),
  /** Set by the run itself when it continues on a newer build at a long wait (absent at the start). */
  carried: z.lazy(() => CarriedRun).optional(),
});
export type ResearchInput = z.infer<typeof ResearchInput>;

/** How a run ended: the coordinator answered at once, a report was written, the review timed out into cancel. */
export const Outcome = z.enum(['answered_directly', 'report', 'cancelled_at_review']);
export type Outcome = z.infer<typeof Outcome>;

export const RunStatus = z.enum(['running', 'awaiting_review', 'completed', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;
export const Phase = z.enum(['coordinating', 'planning', 'reviewing', 'queued', 'researching', 'reporting', 'done']);
export type Phase = z.infer<typeof Phase>;

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

export const Usage = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  /** The estimated cost of the priced tokens (LLM_PRICES and the built-in table). */
  costUsd: z.number().nonnegative(),
  /** Tokens of requests to a model without a price: their cost is not in costUsd (unknown). */
  unpricedTokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof Usage>;

/** A search hit as the workflow sees it: the text stays in the store. */
export const SourceRef = z.object({ sourceId: z.string(), title: z.string(), url: z.string() });
export type SourceRef = z.infer<typeof SourceRef>;

/** Where a run's knowledge_search looks: the tenant's collections and the session's earlier reports. */
export const KnowledgeScope = z.object({
  tenant: z.string(),
  collectionIds: z.array(z.string()),
  sessionId: z.string().optional(),
});
export type KnowledgeScope = z.infer<typeof KnowledgeScope>;

/** The reviewer's decision on a plan under review. */
const ReviewDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('approve') }),
  z.object({ kind: z.literal('revise'), feedback: z.string(), edits: z.array(PlanEditSchema).optional() }),
]);

/** The long wait a run moved at, and what that wait needs to go on. Times in ms since the epoch. */
export const CarriedWait = z.discriminatedUnion('at', [
  z.object({
    /** A clarifying question to the user, asked in coordinator round `round`. */
    at: z.literal('clarification'),
    round: z.number().int().nonnegative(),
    question: z.string(),
    /** The rounds before it, question and answer. */
    clarifications: z.array(z.string()),
    endsAt: z.number(),
    /** The user's answer, when it came in the workflow task that moved the run. */
    answer: z.string().optional(),
  }),
  z.object({
    /** The plan on the board, under review. */
    at: z.literal('review'),
    researchQuestion: z.string(),
    plan: z.lazy(() => Plan),
    endsAt: z.number(),
    /** The reviewer's decision, when it came in the workflow task that moved the run. */
    decision: ReviewDecisionSchema.optional(),
  }),
  z.object({
    /** The accepted plan, its run queued for a slot of its tenant (the queue knows it by its id). */
    at: z.literal('queue'),
    researchQuestion: z.string(),
    plan: z.lazy(() => Plan),
    queuedAt: z.number(),
    granted: z.boolean(),
  }),
]);
export type CarriedWait = z.infer<typeof CarriedWait>;

/**
 * What a research run carries into its next execution when it continues as new on a newer build
 * of the workers at one of its long waits (src/workflows/research/new-build.ts): the state that
 * wait needs and the status view shows, nothing a phase before it could recompute cheaply. Big
 * texts (sources, the background, the plan's pages) stay in PostgreSQL.
 */
/** One source the background brief cites, numbered as its text cites it. */
export const BriefSource = z.object({ n: z.number().int(), title: z.string(), url: z.string() });
export type BriefSource = z.infer<typeof BriefSource>;

/** The background brief the plan was written from: its text (citations `[n]` of its sources, cut
 *  to BRIEF_CHARS) and the sources it cites. */
export const PlanBrief = z.object({ text: z.string(), sources: z.array(BriefSource) });
export type PlanBrief = z.infer<typeof PlanBrief>;
/** Characters of the brief a plan view shows. */
export const BRIEF_CHARS = 1_500;
/** Sources of the brief a plan view lists. */
export const BRIEF_SOURCES = 12;

export const CarriedRun = z.object({
  wait: CarriedWait,
  /** The plan's version on the board and the revisions it went through (no plan yet: absent, 0). */
  planVersion: z.number().int().positive().optional(),
  revisions: z.number().int().nonnegative(),
  /** The background brief the plan was shown with. */
  brief: PlanBrief.optional(),
  locale: z.string().optional(),
  knowledge: z.lazy(() => KnowledgeScope).optional(),
  notes: z.array(z.string()),
  usage: z.lazy(() => Usage),
  said: UserWords,
  /** Guidance and banned domains the user gave so far (the only steering before research). */
  guidance: z.array(z.string()),
  bannedDomains: z.array(z.string()),
  /** Builds the run moved to so far (each a new execution of the same workflow id). */
  moves: z.number().int().positive(),
  /** Writes of the run's row so far: the next execution numbers its writes after them. */
  rowWrites: z.number().int().nonnegative(),
});
export type CarriedRun = z.infer<typeof CarriedRun>;

/** Input of a step's child workflow (researcher or coder). */
export const StepInput = z.object({
  researchId: z.string(),
  question: z.string(),
  locale: z.string(),
  step: PlanStep,
  attempt: z.number().int().positive(),
  /** Reflection feedback on the previous attempt; empty on the first. */
  feedback: z.string(),
  /** Document keys of the accepted results of the steps this one depends on. */
  dependencyKeys: z.array(z.string()),
  /** Rounds of tool use before the researcher must answer. */
  maxToolRounds: z.number().int().positive().optional(),
  /** Programs the coder may write for one attempt of the step (each fix sees the last error). */
  maxCodeAttempts: z.number().int().positive().optional(),
  /** What is left of the run's budget when the step starts: the step answers with what it has
   *  once it spent it (absent when the run has no budget). */
  budget: z.object({ tokens: z.number().optional(), costUsd: z.number().optional(), deadlineAt: z.number().optional() }).optional(),
  /** The run's outage limit and retry settings (absent: the defaults). */
  maxOutage: Duration.optional(),
  retry: RetrySettings.optional(),
  /** The run's knowledge base (absent: none). */
  knowledge: KnowledgeScope.optional(),
  /** Pages the user asked the run to read (steering mustRead): the step reads them first. */
  mustRead: z.array(z.string()).optional(),
});
export type StepInput = z.infer<typeof StepInput>;

/** What a step attempt returns: the stored document's key and a short summary, never the text. */
export const StepOutput = z.object({
  /** Documents table key of the result: `step/<stepId>/<attempt>`. */
  key: z.string(),
  summary: z.string(),
  sourceIds: z.array(z.string()),
  usage: Usage,
  /** Failures the step worked around (a search provider or an MCP server that failed). */
  notes: z.array(z.string()).optional(),
  /** Why the step answered before it was done: its context or budget share was spent, or its tool
   *  rounds ran out while the model still wanted tools. Absent when it finished on its own. */
  cutShort: z.string().optional(),
  /** The judge's verdict, asked by the step's last activity; absent when the user asked the run to
   *  wrap up (the step is then accepted unjudged). */
  verdict: z.object({ passed: z.boolean(), feedback: z.string() }).optional(),
});
export type StepOutput = z.infer<typeof StepOutput>;

/** Documents table key of one attempt of a step's result. */

export const ResearchResult = z.object({
  id: z.string(),
  status: z.enum(['completed', 'cancelled']),
  outcome: Outcome,
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
