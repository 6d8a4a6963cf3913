// The search router's model: names a search query's topic when the keyword rules are not sure
// (src/activities/search/router.ts). It is answered inside the web search (webSearch), which makes the
// classifier below with the run's id; the router keeps each answer per query text in its process,
// and takes the rules' answer when the model fails (noted for the report when the model answered
// unusably).
import { z } from 'zod';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import { TOPICS, type TopicClassifier } from '../search/router';
import type { Store } from '../store';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { defineRole } from '../role-kit/role';

/** The answer: the query's topic, which decides the providers that search it. */
export const SearchTopic = z.object({
  topic: z.enum(TOPICS).describe('The topic whose search engines suit the query best'),
  reason: z.string().describe('One short sentence: why'),
});
export type SearchTopic = z.infer<typeof SearchTopic>;

export const SEARCH_TOPIC_PROMPT = jsonPrompt(
  {
    file: 'search-topic',
    role: 'coordinator',
    // A word and a sentence.
    maxTokens: 200,
    vars: { query: text },
    untrusted: { query: 'search_query' },
  },
  'SearchTopic',
  SearchTopic,
);

/** The model call that classifies one query for a run's web search (the call log keys it by the
 *  activity it runs in, so a retried activity reuses its answer). */
export function createTopicClassifier(
  deps: { llm: Pick<Llm, 'structured'>; store?: Pick<Store, 'saveDocument'> | undefined },
  researchId: string,
): TopicClassifier {
  return async (query) => {
    try {
      const r = await deps.llm.structured(SEARCH_TOPIC_PROMPT, { query }, { researchId, key: 'search-topic' });
      return r.output.topic;
    } catch (err) {
      if (deps.store && modelGaveUp(err)) {
        const what = `the providers for "${query.slice(0, 80)}" were chosen by keyword rules`;
        // The note is for the report; the router falls back whether or not it could be written.
        await Promise.resolve()
          .then(() => noteFallback(deps.store!, researchId, 'search-topic', activityKey(), what, err))
          .catch(() => undefined);
      }
      throw err;
    }
  };
}

export const searchTopic = defineRole({
  does: 'Names the topic of a search query the keyword rules are unsure of, which picks its search providers.',
  prompts: { searchTopic: SEARCH_TOPIC_PROMPT },
  parts: [],
  activities: () => ({}),
  // The web search (src/activities/search/index.ts) runs inside researchBackground and researcherTurn.
  answeredIn: { activity: 'researcherTurn', module: 'src/activities/search/index.ts' },
});
