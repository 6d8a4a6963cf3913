// The knowledge-base decision: which of the tenant's collections a run searches, chosen by the
// model from their descriptions (Spring AI Alibaba's "professional knowledge base" node). Code
// keeps only ids from the list it gave. A model that cannot choose: every usable collection is
// searched (they are the tenant's own documents; retrieval ranks passages, so one that does not
// fit costs little), with a note.
import { z } from 'zod';
import { type Usage } from '../../shared/schemas';
import { ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { defineRole } from '../role-kit/role';

/** The answer: which of the tenant's collections can help with the question. */
export const KnowledgeChoice = z.object({
  collectionIds: z.array(z.string()).describe('Ids from the list of collections; empty when none fits'),
  reason: z.string().describe('One sentence: why these collections, or why none'),
});
export type KnowledgeChoice = z.infer<typeof KnowledgeChoice>;

export const KNOWLEDGE_ROUTER_PROMPT = jsonPrompt(
  {
    file: 'knowledge-router',
    role: 'planner',
    vars: { question: text, collections: text },
    untrusted: { question: 'user_message', collections: 'collections' },
  },
  'KnowledgeChoice',
  KnowledgeChoice,
);

export interface CollectionChoiceInput {
  researchId: string;
  question: string;
  collections: { collectionId: string; name: string; description: string; documents: number }[];
}

export function createKnowledgeRouterActivities(deps: { llm: Llm; store: Pick<Store, 'saveDocument'> }) {
  async function chooseCollections(input: CollectionChoiceInput): Promise<{ collectionIds: string[]; reason: string; usage: Usage }> {
    let r;
    try {
      r = await deps.llm.structured(
        KNOWLEDGE_ROUTER_PROMPT,
        {
          question: input.question,
          collections: input.collections
            .map((c) => `- id ${c.collectionId}: "${c.name}" (${c.documents} documents) — ${c.description || '(no description)'}`)
            .join('\n'),
        },
        { researchId: input.researchId },
      );
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      const what = 'every usable knowledge base collection was searched';
      await noteFallback(deps.store, input.researchId, 'knowledge-router', activityKey(), what, err);
      return { collectionIds: input.collections.map((c) => c.collectionId), reason: 'the model could not choose', usage: ZERO_USAGE };
    }
    const known = new Set(input.collections.map((c) => c.collectionId));
    return { collectionIds: [...new Set(r.output.collectionIds.filter((id) => known.has(id)))], reason: r.output.reason, usage: r.usage };
  }
  return { chooseCollections };
}

export const knowledgeRouter = defineRole({
  does: "Chooses which of the tenant's document collections a run searches, from their descriptions.",
  prompts: { knowledgeRouter: KNOWLEDGE_ROUTER_PROMPT },
  parts: [],
  activities: createKnowledgeRouterActivities,
});
