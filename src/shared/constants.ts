export const DEFAULT_TASK_QUEUE = 'deep-research';
export const DEFAULT_NAMESPACE = 'default';

/** Roles that may each use their own model (LLM_MODEL_<ROLE>). */
export const LLM_ROLES = ['coordinator', 'planner', 'researcher', 'coder', 'judge', 'reporter'] as const;
export type LlmRole = (typeof LLM_ROLES)[number];

/** Search attributes the dev server registers and workflows upsert; names are the Temporal UI's column names. */
export const SEARCH_ATTRIBUTES = {
  ResearchStatus: 'Keyword',
  ResearchPhase: 'Keyword',
  ResearchTenant: 'Keyword',
  ResearchStepCount: 'Int',
  /** The question, for word search in the run list (`?q=`). */
  ResearchQuestion: 'Text',
} as const;

/** Prefix of every research workflow id; ids are `research-<uuid>` or `research-<key hash>`. */
export const RESEARCH_ID_PREFIX = 'research-';

/** How long an outage of an outside system is waited out unless a run says otherwise. */
export const DEFAULT_MAX_OUTAGE = '6h';
/** The shortest maxOutage a request may set (RUN_MIN_OUTAGE's default): shorter, a run fails on the
 *  first slow answer of the LLM or a blip of PostgreSQL instead of riding it out. */
export const DEFAULT_MIN_OUTAGE = '1m';
/** How long a worker making an LLM call may stay silent before the call goes to another worker. */
export const DEFAULT_LLM_HEARTBEAT_TIMEOUT = '15s';

/** Workflow results and history carry summaries of at most this many characters, never whole texts. */
export const SUMMARY_MAX_CHARS = 500;

/** LLM activities (and page extraction) run on `<task queue><LLM_QUEUE_SUFFIX>`: one rate limit for
 *  the provider across all workers, and a cap per worker. */
export const LLM_QUEUE_SUFFIX = '-llm';

/** Sandbox activities run on `<task queue><SANDBOX_QUEUE_SUFFIX>`, with their own concurrency limit. */
export const SANDBOX_QUEUE_SUFFIX = '-sandbox';

/** Pages rendered in headless Chromium run on `<task queue><BROWSER_QUEUE_SUFFIX>`, polled only by
 *  workers that have a browser (BROWSER). */
export const BROWSER_QUEUE_SUFFIX = '-browser';

/** The signal a worker sends a workflow about a call it is retrying (src/activities/waits.ts). */
export const CALL_WAIT_SIGNAL = 'callWait';
