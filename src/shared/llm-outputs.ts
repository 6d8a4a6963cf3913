// What several roles' answers share (the bounds the prompts state, a plan step as a model writes
// it, a cited text) and the arguments of the researcher's tools. Each role's own answer schema is
// declared beside its prompt, in its module under src/activities/roles/; LLM activities parse every
// answer with its schema before returning, so workflows only ever see valid data.
//
// Counts and sizes the prompts state are bounds in the JSON Schema the model is sent (maxItems,
// maxLength: servers that constrain decoding, llama.cpp among them, enforce them), but an answer
// over a bound is cut before it is checked, never refused: a long answer is still an answer.
import { z } from 'zod';
import { StepType } from './schemas';

/** A list of at most `max` items: longer lists are cut to `max` before they are checked. */
export function cappedList<T extends z.ZodType>(item: T, max: number, min = 0) {
  return z.preprocess((v) => (Array.isArray(v) ? v.slice(0, max) : v), z.array(item).min(min).max(max));
}

/** A text of at most `max` characters: a longer one is cut to `max` before it is checked. */
export function cappedText(max: number) {
  return z.preprocess((v) => (typeof v === 'string' ? v.slice(0, max) : v), z.string().max(max));
}

/** Limits the prompts state and the answers' schemas carry (see the prompts in prompts/). */
export const LIMITS = {
  /** The most search queries a rewrite may give (the `queryCount` option's maximum). */
  queries: 10,
  queryChars: 150,
  /** The most steps a plan or a gap reflection may give (the `maxSteps` option's maximum). */
  steps: 12,
  stepIdChars: 32,
  titleChars: 200,
  descriptionChars: 1_000,
  gaps: 10,
  gapChars: 300,
  feedbackChars: 1_000,
  shortTextChars: 500,
} as const;

/**
 * A plan step as a model writes it: loose where code can repair it (ids, empty texts, dependencies,
 * an unknown type) and strict only where it cannot. The planner's activities turn it into a
 * PlanStep (src/shared/schemas.ts).
 */
export const PlanStepDraft = z.object({
  id: cappedText(64).describe('Short id: lowercase letters, digits and "-", e.g. "prices-2010"'),
  title: cappedText(LIMITS.titleChars),
  description: cappedText(LIMITS.descriptionChars),
  type: z.preprocess((v) => (v === 'processing' ? v : 'research'), StepType),
  needSearch: z.boolean(),
  dependsOn: cappedList(z.string(), LIMITS.steps).describe('ids of earlier steps whose results this step needs'),
});
export type PlanStepDraft = z.infer<typeof PlanStepDraft>;

/** A short text that cites sources by their ids, e.g. "[S3f9a01c2]". */
export const CitedText = z.object({
  text: z.string().min(1).describe('Markdown; cite sources by their ids in square brackets, e.g. [S3f9a01c2]'),
  summary: z.string().min(1).describe('Two or three plain sentences summarising the text'),
});
export type CitedText = z.infer<typeof CitedText>;

/** Arguments of the researcher's tools, validated before any tool runs. */
export const WebSearchArgs = z
  .object({ queries: z.array(z.string().trim().min(1)).min(1).max(5).describe('1-5 web search queries') })
  .strict();
export const CrawlArgs = z
  .object({
    urls: z.array(z.string().url()).min(1).max(5).describe('1-5 URLs from search results to read'),
    goal: z.string().min(1).describe('What to look for on these pages'),
  })
  .strict();
/** A reflection written down between tool calls (the researcher's and the supervisor's `think`):
 *  nothing is searched; it is recorded in the run's timeline. */
export const ThinkArgs = z.object({ reflection: cappedText(2_000).describe('What the findings show, what is missing, what to do next') });
export const KnowledgeSearchArgs = z
  .object({
    query: z.string().trim().min(1),
    alternatives: z
      .array(z.string().trim().min(1))
      .max(3)
      .optional()
      .describe('Up to 3 rephrasings in other words, to find passages that use different terms'),
  })
  .strict();

/** A file name the sandbox writes to /work: no path, no hidden file. */
const SANDBOX_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Characters of inline data one python call may carry: it travels in the workflow history. */
export const PYTHON_INLINE_DATA_CHARS = 20_000;
export const PythonArgs = z
  .object({
    code: z.string().min(1).max(20_000).describe('A complete Python 3 program; print the results you want to read'),
    files: z
      .array(z.string().regex(/^S[0-9a-f]{8}$/, 'expected a source id such as S3f9a01c2'))
      .max(5)
      .optional()
      .describe('Source ids from earlier tool results whose text the program reads, each as /work/<id>.md'),
    data: z
      .record(z.string(), z.string())
      .optional()
      .describe('Small inline files: plain file name (e.g. "prices.csv") -> text, written to /work/<name>')
      .superRefine((data, ctx) => {
        for (const name of Object.keys(data ?? {})) {
          if (!SANDBOX_FILE_NAME.test(name) || name === 'main.py') {
            ctx.addIssue({ code: 'custom', message: `"${name.slice(0, 80)}" is not a plain file name such as "prices.csv"` });
          }
        }
        if (Object.values(data ?? {}).reduce((n, t) => n + t.length, 0) > PYTHON_INLINE_DATA_CHARS) {
          ctx.addIssue({
            code: 'custom',
            message: `inline data is limited to ${PYTHON_INLINE_DATA_CHARS} characters in all; pass larger data as source ids in files`,
          });
        }
      }),
  })
  .strict();

export { PYTHON_RUNS_PER_ATTEMPT, pythonRunNumber } from './plain';

export type ToolCall =
  | { id: string; name: 'web_search'; args: z.infer<typeof WebSearchArgs> }
  | { id: string; name: 'crawl'; args: z.infer<typeof CrawlArgs> }
  | { id: string; name: 'knowledge_search'; args: z.infer<typeof KnowledgeSearchArgs> }
  | { id: string; name: 'think'; args: z.infer<typeof ThinkArgs> }
  | { id: string; name: 'python'; args: z.infer<typeof PythonArgs> }
  | { id: string; name: 'mcp'; server: string; tool: string; args: Record<string, unknown> };
