// The background brief: what the rewrite's searches found (their snippets, and the best few pages
// read for the question), written up with citations for the planner. A model that writes no usable
// brief: the sources are listed instead (writeCitedDocument), and the planner does not take that
// list for enough context.
import { CitedText } from '../../shared/llm-outputs';
import type { StepOutput } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import { exampleTexts } from '../role-kit/prompt-copies';
import type { Store } from '../store';
import { sourcesBlock, writeCitedDocument } from '../role-kit/cited';
import { defineRole } from '../role-kit/role';

export const BACKGROUND_PROMPT = jsonPrompt(
  {
    file: 'background',
    role: 'planner',
    vars: { question: text, locale: text, sources: text, pages: text, searchErrors: text },
    settings: ['locale'],
    untrusted: { question: 'user_message', sources: 'sources', pages: 'pages' },
  },
  'BackgroundBrief',
  CitedText,
);

/** The texts of the prompt's example brief: a brief that repeats them is not used. */
const EXAMPLE_TEXTS = exampleTexts(BACKGROUND_PROMPT.file, 'text', 'summary');

/** A page read for the brief: its source id when it was read, else why not. */
export interface BackgroundPage {
  url: string;
  status: 'ok' | 'blocked' | 'skipped' | 'failed';
  sourceId?: string;
}

export function createBackgroundActivities(deps: { llm: Llm; store: Store }) {
  const { store } = deps;

  async function writeBackground(input: {
    researchId: string;
    question: string;
    locale: string;
    sourceIds: string[];
    searchErrors: string[];
    /** The pages read for the question (absent: none). */
    pages?: BackgroundPage[];
  }): Promise<StepOutput> {
    const pageIds = [...new Set((input.pages ?? []).flatMap((p) => (p.status === 'ok' && p.sourceId ? [p.sourceId] : [])))];
    const all = await store.getSources(input.researchId, [...new Set([...input.sourceIds, ...pageIds])]);
    // A page read holds its extract under the id its snippet had (crawled evidence wins): it is
    // shown once, as a page.
    const pages = all.filter((s) => pageIds.includes(s.sourceId));
    const snippets = all.filter((s) => !pageIds.includes(s.sourceId));
    // A model that gives no usable brief: writeCitedDocument lists the sources instead, with a note.
    return writeCitedDocument(deps, {
      researchId: input.researchId,
      key: 'background',
      kind: 'background',
      prompt: BACKGROUND_PROMPT,
      vars: {
        question: input.question,
        locale: input.locale,
        sources: sourcesBlock(snippets),
        pages: pages.length ? sourcesBlock(pages) : '(no pages were read)',
        searchErrors: input.searchErrors.join('\n') || '(none)',
      },
      sources: all,
      examples: EXAMPLE_TEXTS,
    });
  }

  return { writeBackground };
}

export const background = defineRole({
  does: 'Writes the background brief, with citations, from the snippets the first searches found and the best pages read.',
  prompts: { background: BACKGROUND_PROMPT },
  parts: [],
  activities: () => ({}),
  answeredIn: { activity: 'researchBackground', module: 'src/activities/phases/background-phase.ts' },
});
