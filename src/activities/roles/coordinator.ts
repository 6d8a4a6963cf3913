// The coordinator: small talk is answered directly, research goes on; the report's locale; an
// optional clarifying question. The locale is settled by code (src/shared/locale.ts): the user's
// choice wins, a model's tag that is no language or contradicts the question is replaced. When the
// model gives no usable answer at all, the request is researched as asked.
import { Context } from '@temporalio/activity';
import type { CoordinatorDecision } from '../../shared/llm-outputs';
import { settleLocale } from '../../shared/locale';
import { ZERO_USAGE, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { modelGaveUp, noteFallback } from './fallbacks';
import { noteCorrection } from './fallbacks';

export function createCoordinatorActivities(deps: { llm: Llm; store: Pick<Store, 'saveDocument'> }) {
  async function classifyRequest(input: {
    researchId: string;
    question: string;
    locale?: string;
    allowClarification: boolean;
    clarifications: string;
  }): Promise<{ decision: CoordinatorDecision; usage: Usage }> {
    const key = Context.current().info.activityId;
    let decision: CoordinatorDecision;
    let usage: Usage;
    try {
      const r = await deps.llm.structured(
        PROMPTS.coordinator,
        {
          question: input.question,
          requestedLocale: input.locale ?? '',
          allowClarification: input.allowClarification,
          clarifications: input.clarifications || '(none)',
        },
        { researchId: input.researchId },
      );
      decision = r.output;
      usage = r.usage;
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      const { locale } = settleLocale({ requested: input.locale, text: input.question });
      await noteFallback(deps.store, input.researchId, 'coordinator', key, `the request was researched as asked, in ${locale}`, err);
      return { decision: researchAsAsked(input.question, locale), usage: ZERO_USAGE };
    }
    const settled = settleLocale({ requested: input.locale, proposed: decision.locale, text: input.question });
    if (settled.replaced) {
      await noteCorrection(deps.store, input.researchId, 'coordinator', key, `the report is in ${settled.locale}: ${settled.replaced}`);
    }
    return { decision: sane({ ...decision, locale: settled.locale }, input), usage };
  }

  return { classifyRequest };
}

/** The decision code makes when the model gave none: research the question, no clarification. */
function researchAsAsked(question: string, locale: string): CoordinatorDecision {
  return { action: 'research', locale, directAnswer: null, researchTopic: question, clarificationQuestion: null };
}

/** A decision the workflow can act on: a direct answer that says something, a question only when allowed. */
function sane(decision: CoordinatorDecision, input: { question: string; allowClarification: boolean }): CoordinatorDecision {
  if (decision.action === 'answer_directly' && !decision.directAnswer?.trim()) return researchAsAsked(input.question, decision.locale);
  const topic = decision.researchTopic?.trim() || null;
  const clarification = input.allowClarification ? decision.clarificationQuestion?.trim() || null : null;
  return { ...decision, researchTopic: topic, clarificationQuestion: clarification };
}
