// The knowledge-base decision: which of the tenant's collections a run searches, chosen by the
// model from their descriptions (Spring AI Alibaba's "professional knowledge base" node). Code
// keeps only ids from the list it gave.
import type { Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';

export interface CollectionChoiceInput {
  researchId: string;
  question: string;
  collections: { collectionId: string; name: string; description: string; documents: number }[];
}

export function createKnowledgeRouterActivities(deps: { llm: Llm }) {
  async function chooseCollections(input: CollectionChoiceInput): Promise<{ collectionIds: string[]; reason: string; usage: Usage }> {
    const r = await deps.llm.structured(
      PROMPTS.knowledgeRouter,
      {
        question: input.question,
        collections: input.collections
          .map((c) => `- id ${c.collectionId}: "${c.name}" (${c.documents} documents) — ${c.description || '(no description)'}`)
          .join('\n'),
      },
      { researchId: input.researchId },
    );
    const known = new Set(input.collections.map((c) => c.collectionId));
    return { collectionIds: [...new Set(r.output.collectionIds.filter((id) => known.has(id)))], reason: r.output.reason, usage: r.usage };
  }
  return { chooseCollections };
}
