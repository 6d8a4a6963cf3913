// What the models are asked to produce (one schema per prompt, see src/activities/llm/prompts.ts)
// and the arguments of the researcher's tools. LLM activities parse every answer with these
// before returning, so workflows only ever see valid data.
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

/** Coordinator's answer: small talk is answered directly, research goes on. The locale is checked
 *  by code (src/shared/locale.ts), not here: a wrong tag is replaced, not sent back for a repair. */
export const CoordinatorDecision = z.object({
  action: z.enum(['answer_directly', 'research']),
  locale: cappedText(35).describe('BCP 47 tag of the language the user wrote in, e.g. en-US'),
  directAnswer: z.string().nullable().describe('The short reply when action is answer_directly; null otherwise'),
  researchTopic: cappedText(LIMITS.shortTextChars)
    .nullable()
    .describe('The research task restated in one sentence when action is research; null otherwise'),
  clarificationQuestion: cappedText(LIMITS.shortTextChars)
    .nullable()
    .describe('One question to the user when the request is too ambiguous to research and clarification is allowed; null otherwise'),
});
export type CoordinatorDecision = z.infer<typeof CoordinatorDecision>;

/** Rewrite and expansion: a precise research question and diverse search queries. */
export const QueryExpansion = z.object({
  researchQuestion: cappedText(LIMITS.shortTextChars).describe('The user question rewritten as one precise research question'),
  queries: cappedList(cappedText(LIMITS.queryChars), LIMITS.queries, 1).describe('Diverse web search queries, each a few words'),
});
export type QueryExpansion = z.infer<typeof QueryExpansion>;

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

/** The planner's answer, repaired by code into a Plan. */
export const PlanDraft = z.object({
  title: cappedText(LIMITS.titleChars),
  thought: cappedText(LIMITS.descriptionChars).describe('Why this plan answers the question'),
  locale: cappedText(35),
  hasEnoughContext: z.boolean().describe('True only if the background already answers the question fully'),
  steps: cappedList(PlanStepDraft, LIMITS.steps),
});
export type PlanDraft = z.infer<typeof PlanDraft>;

/** A short text that cites sources by their ids, e.g. "[S3f9a01c2]". */
export const CitedText = z.object({
  text: z.string().min(1).describe('Markdown; cite sources by their ids in square brackets, e.g. [S3f9a01c2]'),
  summary: z.string().min(1).describe('Two or three plain sentences summarising the text'),
});
export type CitedText = z.infer<typeof CitedText>;

export const JudgeVerdict = z.object({
  passed: z.boolean(),
  feedback: cappedText(LIMITS.feedbackChars).describe('What is missing or wrong; empty when passed'),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

export const ReportDraft = z.object({
  title: z.string().min(1),
  markdown: z.string().min(1).describe('The report body in Markdown, citing sources as [n] with the numbers given'),
});
export type ReportDraft = z.infer<typeof ReportDraft>;

/** A long report's plan: its sections in order, each with the findings it draws on. */
export const ReportOutline = z.object({
  title: z.string().min(1),
  sections: z
    .array(
      z.object({
        heading: z.string().min(1).describe('The section heading, without #'),
        covers: z.string().describe('What the section says and argues, in one or two sentences'),
        findings: z.array(z.string()).describe('Keys of the findings this section draws on'),
      }),
    )
    .min(1),
});
export type ReportOutline = z.infer<typeof ReportOutline>;

/** One section of a long report, written from its own findings. */
export const ReportSection = z.object({
  markdown: z.string().min(1).describe('The section body in Markdown, without its heading, citing sources as [n]'),
});
export type ReportSection = z.infer<typeof ReportSection>;

/** What a page offers for a goal: the evidence quoted or closely paraphrased, and a summary. */
export const PageExtract = z.object({
  relevant: z.boolean().describe('Whether the page has anything that serves the goal'),
  evidence: z.string().describe('The passages that serve the goal, quoted or closely paraphrased, with figures and dates'),
  summary: z.string().describe('One or two sentences: what the page says about the goal'),
});
export type PageExtract = z.infer<typeof PageExtract>;

/** Arguments of the researcher's tools, validated before any tool runs. */
/** Gap reflection after the research team: do the findings answer the question, and if not, what next. */
export const GapReflection = z.object({
  answered: z.boolean().describe('True when the findings answer every part of the question'),
  gaps: cappedList(cappedText(LIMITS.gapChars), LIMITS.gaps).describe('What is still missing, one short sentence each'),
  followUpSteps: cappedList(PlanStepDraft, LIMITS.steps).describe('Research steps that close the gaps (empty when answered)'),
});
export type GapReflection = z.infer<typeof GapReflection>;

/** The claim check: for each cited sentence and source, whether the source's evidence says it. */
export const CitationVerdicts = z.object({
  verdicts: z.array(
    z.object({
      id: z.string().describe('The id of the claim, as given'),
      verdict: z
        .enum(['supported', 'partial', 'unsupported'])
        .describe('supported: the evidence states it; partial: some of it; unsupported: the evidence does not say it or says otherwise'),
      reason: z.string().describe('One short sentence: what the evidence says or lacks'),
    }),
  ),
});
export type CitationVerdicts = z.infer<typeof CitationVerdicts>;

/** The knowledge-base decision: which of the tenant's collections can help with the question. */
export const KnowledgeChoice = z.object({
  collectionIds: z.array(z.string()).describe('Ids from the list of collections; empty when none fits'),
  reason: z.string().describe('One sentence: why these collections, or why none'),
});
export type KnowledgeChoice = z.infer<typeof KnowledgeChoice>;

export const WebSearchArgs = z
  .object({ queries: z.array(z.string().trim().min(1)).min(1).max(5).describe('1-5 web search queries') })
  .strict();
export const CrawlArgs = z
  .object({
    urls: z.array(z.string().url()).min(1).max(5).describe('1-5 URLs from search results to read'),
    goal: z.string().min(1).describe('What to look for on these pages'),
  })
  .strict();
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
  | { id: string; name: 'python'; args: z.infer<typeof PythonArgs> }
  | { id: string; name: 'mcp'; server: string; tool: string; args: Record<string, unknown> };

/** The coder's program for a processing step. */
export const CodeDraft = z.object({
  code: z.string().min(1).describe('A complete Python 3 program; reads its data from /work, writes charts and tables to /output'),
  explanation: z.string().describe('Two sentences: what the program computes and how'),
});
export type CodeDraft = z.infer<typeof CodeDraft>;

/** A scheduled run against the schedule's previous report: claims and figures that changed. */
export const ReportChanges = z.object({
  changes: z.array(
    z.object({
      about: z.string().describe('What the claim or figure is about, in a few words'),
      before: z.string().describe('What the earlier report said, with its figure where it had one'),
      now: z.string().describe('What the current findings say instead, with the new figure'),
      source: z.string().describe('The id of the current source that says it, e.g. S3f9a01c2'),
    }),
  ),
});
export type ReportChanges = z.infer<typeof ReportChanges>;
