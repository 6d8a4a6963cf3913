// The rewrite: the user's question (with the coordinator's reading) becomes one precise research
// question and the search queries of the background investigation. A model that gives no usable
// answer: the question itself is researched, searched for as written and by its content words.
import { z } from 'zod';
import { COORDINATOR_READING } from '../../shared/background';
import { cappedList, cappedText, LIMITS } from '../../shared/llm-outputs';
import { type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { activityKey, modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import { copiedOffTopic, exampleTexts } from '../role-kit/prompt-copies';
import { defineRole } from '../role-kit/role';
import { plural, wasWere } from '../../shared/plural';

/** The answer: a precise research question and diverse search queries. */
export const QueryExpansion = z.object({
  researchQuestion: cappedText(LIMITS.shortTextChars).describe('The user question rewritten as one precise research question'),
  queries: cappedList(cappedText(LIMITS.queryChars), LIMITS.queries, 1).describe('Diverse web search queries, each a few words'),
});
export type QueryExpansion = z.infer<typeof QueryExpansion>;

export const REWRITE_PROMPT = jsonPrompt(
  {
    file: 'rewrite',
    role: 'planner',
    vars: { question: text, locale: text, count, memory: text },
    settings: ['count', 'locale'],
    untrusted: { question: 'user_message', memory: 'session_memory' },
  },
  'QueryExpansion',
  QueryExpansion,
);

export function createRewriteActivities(deps: { llm: Llm; store: Pick<Store, 'getDocuments' | 'saveDocument'> }) {
  const { llm, store } = deps;

  async function expandQueries(input: {
    researchId: string;
    question: string;
    locale: string;
    count: number;
  }): Promise<{ expansion: QueryExpansion; usage: Usage }> {
    const [memory] = await store.getDocuments(input.researchId, ['memory']);
    try {
      const r = await llm.structured(
        REWRITE_PROMPT,
        { question: input.question, locale: input.locale, count: input.count, memory: memory?.content ?? '(no earlier questions)' },
        { researchId: input.researchId },
      );
      // The prompt's example copied for a question about something else is left out, said in the notes.
      const asked = userQuestion(input.question);
      const copied = (t: string) => copiedOffTopic(t, EXAMPLE_TEXTS, asked);
      const kept = r.output.queries.filter((q) => !copied(q));
      const written = r.output.researchQuestion.trim();
      const copiedQuestion = written !== '' && copied(written);
      const researchQuestion = written && !copiedQuestion ? written : asked;
      const queries = distinct(kept).slice(0, input.count);
      const left = r.output.queries.length - kept.length + (copiedQuestion ? 1 : 0);
      if (left) {
        const what = `${plural(left, 'text')} of the rewrite repeated its prompt's example about another topic and ${wasWere(left)} left out`;
        await noteCorrection(store, input.researchId, 'rewrite', activityKey(), what);
      }
      return {
        expansion: { researchQuestion, queries: queries.length ? queries : fallbackQueries(researchQuestion, input.count) },
        usage: r.usage,
      };
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      const question = userQuestion(input.question);
      await noteFallback(
        store,
        input.researchId,
        'rewrite',
        activityKey(),
        'the question itself was researched, and searched for as written',
        err,
      );
      return { expansion: { researchQuestion: question, queries: fallbackQueries(question, input.count) }, usage: ZERO_USAGE };
    }
  }

  return { expandQueries };
}

export const rewrite = defineRole({
  does: 'Rewrites the question into one precise research question and the search queries of the background investigation.',
  prompts: { rewrite: REWRITE_PROMPT },
  parts: [],
  activities: () => ({}),
  answeredIn: { activity: 'researchBackground', module: 'src/activities/phases/background-phase.ts' },
});

/** The prompt's example answer, its research question and queries: what a copy of it repeats. */
const EXAMPLE_TEXTS = exampleTexts(REWRITE_PROMPT.file, 'researchQuestion', 'queries');

/** The user's question out of the rewrite's input (the workflow appends the coordinator's reading). */
function userQuestion(input: string): string {
  const at = input.indexOf(COORDINATOR_READING);
  return (at >= 0 ? input.slice(0, at) : input).trim();
}

function distinct(items: string[]): string[] {
  const seen = new Set<string>();
  return items.map((q) => q.trim()).filter((q) => q && !seen.has(q.toLowerCase()) && seen.add(q.toLowerCase()));
}

const FILLER = new Set(
  'a an the of and or to in on for with by from is are was were be how what why which who when does do did has have much many'.split(' '),
);

/** Search queries made by code from a question: the question, then its content words. */
export function fallbackQueries(question: string, count: number): string[] {
  const asked = summarize(question.replace(/\s+/g, ' '), LIMITS.queryChars);
  const words = asked
    .replace(/[?!.,;:"()]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !FILLER.has(w.toLowerCase()));
  const variants = [asked, words.join(' '), words.slice(0, 4).join(' ')];
  return distinct(variants).slice(0, Math.max(1, count));
}
