// The extractor: reads one page for a researcher's goal and pulls out the evidence. It is answered
// inside the crawl's activity (src/activities/crawl/index.ts, crawlPage), which fetches the page
// first and, when the model gives no usable answer, keeps the page's opening as the evidence.
import { z } from 'zod';
import type { Llm } from '../llm/call';
import { count, flag, jsonPrompt, text, type PromptVars } from '../llm/prompt-def';
import { pageBudgetTokens, type PageExtractor } from '../crawl';
import { defineRole } from '../role-kit/role';

/** The answer: the evidence a page holds for a goal, quoted or closely paraphrased, and a summary. */
export const PageExtract = z.object({
  relevant: z.boolean().describe('Whether the page has anything that serves the goal'),
  evidence: z.string().describe('The passages that serve the goal, quoted or closely paraphrased, with figures and dates'),
  summary: z.string().describe('One or two sentences: what the page says about the goal'),
});
export type PageExtract = z.infer<typeof PageExtract>;

export const EXTRACTOR_PROMPT = jsonPrompt(
  {
    file: 'extractor',
    role: 'researcher',
    // A summary and the evidence a page holds for one goal: a small model that loops runs on to
    // the role's limit otherwise (2,048 tokens, minutes on a CPU).
    maxTokens: 1_024,
    vars: {
      goal: text,
      url: text,
      title: text,
      page: text,
      truncated: flag,
      shownChars: count,
      pageChars: count,
      inParts: flag,
      part: count,
      parts: count,
    },
    untrusted: { page: 'page', title: 'title' },
  },
  'PageExtract',
  PageExtract,
);

/** The extractor's call, which the crawl is given (src/activities/index.ts): one page read for a
 *  goal, with as much of a page at a time as its model's context window holds. */
export function createPageExtractor(llm: Pick<Llm, 'structured' | 'contextWindow' | 'outputLimit'>): PageExtractor {
  const extract = async (vars: PromptVars<typeof EXTRACTOR_PROMPT>, ctx: { researchId: string; key: string }) => {
    const r = await llm.structured(EXTRACTOR_PROMPT, vars, ctx);
    return { output: r.output, usage: r.usage };
  };
  const { role } = EXTRACTOR_PROMPT;
  const pageBudget = async () => pageBudgetTokens(await llm.contextWindow(role), EXTRACTOR_PROMPT.maxTokens ?? llm.outputLimit(role));
  return Object.assign(extract, { pageBudget });
}

export const extractor = defineRole({
  does: "Reads one page for a researcher's goal and keeps the evidence it holds, with a summary.",
  prompts: { extractor: EXTRACTOR_PROMPT },
  parts: [],
  activities: () => ({}),
  answeredIn: { activity: 'crawlPage', module: 'src/activities/crawl/index.ts' },
});
