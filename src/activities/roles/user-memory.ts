// User memory: after a run, a model reads what the user wrote in it (question, plan feedback,
// clarification answers, steering) and proposes lasting facts about the user, each quoting the
// words it came from. Code keeps only what it can check: every quote must occur in those words
// and share a word with the fact (a small model copies its prompt's example facts onto any
// quote), evidence a deletion ruled out is dropped (a deleted fact never comes back from it), and facts
// that say the same as a known one add their evidence there. A model that gives nothing usable
// teaches nothing, with a note; the run never fails for it. The coordinator, planner and reporter
// read the facts through `userMemory` as a delimited block of data.
import { z } from 'zod';
import { cappedList, cappedText } from '../../shared/llm-outputs';
import {
  bearsOut,
  buried,
  FACT_TEXT_MAX,
  FactCategory,
  groundQuote,
  MEMORY_LIMITS,
  mergeFacts,
  type Evidence,
  type LearnedFact,
  type MemoryOwner,
  type UserWords,
} from '../../shared/memory';
import { type Usage } from '../../shared/schemas';
import { ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { newFactId } from '../store/memory';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { readUserMemory } from '../role-kit/memory-block';
import { defineRole } from '../role-kit/role';

/** The answer: facts about the user, each with the user's words it came from. */
export const UserFacts = z.object({
  facts: cappedList(
    z.object({
      // An unknown category is still a fact: it goes under `other`.
      category: z.preprocess((v) => (FactCategory.safeParse(v).success ? v : 'other'), FactCategory),
      text: cappedText(FACT_TEXT_MAX).describe('One sentence about the user, in the third person'),
      quotes: cappedList(cappedText(MEMORY_LIMITS.quoteChars), 3).describe("The user's exact words this fact comes from"),
    }),
    MEMORY_LIMITS.factsPerRun,
  ),
});
export type UserFacts = z.infer<typeof UserFacts>;

export const USER_MEMORY_PROMPT = jsonPrompt(
  {
    file: 'user-memory',
    role: 'coordinator',
    vars: { words: text, known: text },
    untrusted: { words: 'user_words', known: 'user_memory' },
  },
  'UserFacts',
  UserFacts,
);

export interface LearnInput {
  researchId: string;
  owner: MemoryOwner;
  words: UserWords;
}

export interface LearnOutput {
  /** Facts added or given new evidence. */
  learned: number;
  /** Proposed facts left out: quotes not in the user's words or not bearing the fact out, or evidence a deletion ruled out. */
  rejected: number;
  usage: Usage;
}

/** The model's facts with the quotes code could find in the user's words and that bear them out, as evidence. */
export function groundFacts(proposed: UserFacts['facts'], input: Pick<LearnInput, 'researchId' | 'words'>): LearnedFact[] {
  const grounded: LearnedFact[] = [];
  for (const f of proposed) {
    const text = f.text.trim();
    if (!text) continue;
    const evidence: Evidence[] = [];
    for (const quote of f.quotes) {
      const said = groundQuote(quote, input.words);
      if (said && bearsOut(text, quote)) evidence.push({ researchId: input.researchId, kind: said.kind, quote: quote.trim(), at: said.at });
    }
    if (evidence.length) grounded.push({ category: f.category, text, evidence });
  }
  return grounded;
}

export function createUserMemoryActivities(deps: { llm: Llm; store: Pick<Store, 'memory' | 'saveDocument'> }) {
  async function learnAboutUser(input: LearnInput): Promise<LearnOutput> {
    const words = input.words.filter((w) => w.text.trim());
    if (!words.length) return { learned: 0, rejected: 0, usage: ZERO_USAGE };
    let r;
    try {
      r = await deps.llm.structured(
        USER_MEMORY_PROMPT,
        {
          words: words.map((w) => `[${w.kind}] ${w.text}`).join('\n\n'),
          known: (await readUserMemory(deps.store, input.owner)) || '(nothing yet)',
        },
        { researchId: input.researchId },
      );
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      await noteFallback(
        deps.store,
        input.researchId,
        'user-memory',
        activityKey(),
        'nothing was learned about the user from this run',
        err,
      );
      return { learned: 0, rejected: 0, usage: ZERO_USAGE };
    }
    const grounded = groundFacts(r.output.facts, { researchId: input.researchId, words });
    let kept: LearnedFact[] = [];
    const merged = await deps.store.memory.learn(input.owner, (known, tombstones) => {
      kept = grounded
        .map((f) => ({ ...f, evidence: f.evidence.filter((e) => !buried(f.text, e, tombstones)) }))
        .filter((f) => f.evidence.length > 0);
      return mergeFacts(known, kept, new Date().toISOString(), newFactId);
    });
    return { learned: merged.changed.length, rejected: r.output.facts.length - kept.length, usage: r.usage };
  }
  return { learnAboutUser };
}

export const userMemory = defineRole({
  does: "Learns lasting facts about the user (field, expertise, language, sources, dislikes) from the user's own words in a run.",
  prompts: { userMemory: USER_MEMORY_PROMPT },
  parts: [],
  activities: createUserMemoryActivities,
});
