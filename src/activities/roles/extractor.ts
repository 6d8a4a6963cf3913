// The extractor: reads one page for a researcher's goal and pulls out the evidence. It is answered
// inside the crawl's activity (src/activities/crawl/index.ts, crawlPage), which fetches the page
// first and, when the model gives no usable answer, keeps the page's opening as the evidence.
import { z } from 'zod';
import type { Llm } from '../llm/call';
import { count, flag, jsonPrompt, text, type PromptVars } from '../llm/prompt-def';
import type { Usage } from '../../shared/schemas';
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
    vars: { goal: text, url: text, title: text, page: text, truncated: flag, shownChars: count, pageChars: count },
    untrusted: { page: 'page', title: 'title' },
  },
  'PageExtract',
  PageExtract,
);

/** The extractor's call, which the crawl is given (src/activities/index.ts): one page read for a goal. */
export function createPageExtractor(llm: Pick<Llm, 'structured'>) {
  return async (
    vars: PromptVars<typeof EXTRACTOR_PROMPT>,
    ctx: { researchId: string; key: string },
  ): Promise<{ output: PageExtract; usage: Usage }> => {
    const r = await llm.structured(EXTRACTOR_PROMPT, vars, ctx);
    return { output: r.output, usage: r.usage };
  };
}

export const extractor = defineRole({
  does: "Reads one page for a researcher's goal and keeps the evidence it holds, with a summary.",
  prompts: { extractor: EXTRACTOR_PROMPT },
  parts: [],
  activities: () => ({}),
  answeredIn: { activity: 'crawlPage', module: 'src/activities/crawl/index.ts' },
});
