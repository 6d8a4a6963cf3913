// The background brief: what the rewrite's searches found, written up with citations for the
// planner. A model that writes no usable brief: the sources are listed instead (writeCitedDocument),
// and the planner does not take that list for enough context.
import { CitedText } from '../../shared/llm-outputs';
import type { StepOutput } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { sourcesBlock, writeCitedDocument } from './cited';
import { defineRole } from './role';

export const BACKGROUND_PROMPT = jsonPrompt(
  {
    file: 'background',
    role: 'planner',
    vars: { question: text, locale: text, sources: text, searchErrors: text },
    untrusted: { question: 'user_message', sources: 'sources' },
  },
  'BackgroundBrief',
  CitedText,
);

/** The note writeCitedDocument leaves when it listed the sources because the model wrote no brief. */
export const BACKGROUND_FALLBACK_NOTE = 'fallback/background/background';

export function createBackgroundActivities(deps: { llm: Llm; store: Store }) {
  const { store } = deps;

  async function writeBackground(input: {
    researchId: string;
    question: string;
    locale: string;
    sourceIds: string[];
    searchErrors: string[];
  }): Promise<StepOutput> {
    const sources = await store.getSources(input.researchId, input.sourceIds);
    // A model that gives no usable brief: writeCitedDocument lists the sources instead, with a note.
    return writeCitedDocument(deps, {
      researchId: input.researchId,
      key: 'background',
      kind: 'background',
      prompt: BACKGROUND_PROMPT,
      vars: {
        question: input.question,
        locale: input.locale,
        sources: sourcesBlock(sources),
        searchErrors: input.searchErrors.join('\n') || '(none)',
      },
      sources,
    });
  }

  return { writeBackground };
}

export const background = defineRole({
  does: 'Writes the background brief, with citations, from the sources the first searches found.',
  prompts: { background: BACKGROUND_PROMPT },
  parts: [],
  activities: createBackgroundActivities,
});
