// The coordinator: small talk is answered directly, research goes on; the report's locale; an
// optional clarifying question.
import type { CoordinatorDecision } from '../../shared/llm-outputs';
import type { Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';

const ALLOW_CLARIFICATION =
  'If the request is too ambiguous to research (the subject, scope or goal could mean very different things), ' +
  'you may set `clarificationQuestion` to one short question instead; otherwise set it to null.';

export function createCoordinatorActivities(deps: { llm: Llm }) {
  async function classifyRequest(input: {
    researchId: string;
    question: string;
    locale?: string;
    allowClarification: boolean;
    clarifications: string;
  }): Promise<{ decision: CoordinatorDecision; usage: Usage }> {
    const r = await deps.llm.structured(
      PROMPTS.coordinator,
      {
        question: input.question,
        localeHint: input.locale ? `The user asked for the report in ${input.locale}; use that tag.` : '',
        clarificationRule: input.allowClarification ? ALLOW_CLARIFICATION : 'Always set `clarificationQuestion` to null.',
        clarifications: input.clarifications || '(none)',
      },
      { researchId: input.researchId },
    );
    return { decision: r.output, usage: r.usage };
  }

  return { classifyRequest };
}
