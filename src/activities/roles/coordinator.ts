// The coordinator: small talk is answered directly, research goes on; the report's locale; an
// optional clarifying question. The locale is settled by code (src/shared/locale.ts): the user's
// choice wins, a model's tag that is no language or contradicts the question is replaced. When the
// model gives no usable answer at all, the request is researched as asked.
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { cappedText, LIMITS } from '../../shared/llm-outputs';
import { settleLocale } from '../../shared/locale';
import { type Usage } from '../../shared/schemas';
import { ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { flag, jsonPrompt, text } from '../llm/prompt-def';
import { echoedExample, exampleTexts } from '../role-kit/prompt-copies';
import type { Store } from '../store';
import type { MemoryOwner } from '../../shared/memory';
import { modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import { readUserMemory } from '../role-kit/memory-block';
import { defineRole } from '../role-kit/role';
import { DraftStream } from '../role-kit/draft-stream';

/** The answer: small talk is answered directly, research goes on. The locale is checked by code
 *  (src/shared/locale.ts), not here: a wrong tag is replaced, not sent back for a repair. */
export const CoordinatorDecision = z.object({
  action: z.enum(['answer_directly', 'research']),
  locale: cappedText(35).describe('BCP 47 tag of the language the user wrote in, e.g. en-US'),
  directAnswer: z.string().nullable().describe('The short reply when action is answer_directly; null otherwise'),
  researchTopic: cappedText(LIMITS.shortTextChars)
    .nullable()
    .describe('The research task restated in one sentence when action is research; null otherwise'),
  clarificationQuestion: cappedText(LIMITS.shortTextChars)
    .nullable()
    .describe('One question to the user when the request is too ambiguous to research and clarification is allowed; null otherwise'),
});
export type CoordinatorDecision = z.infer<typeof CoordinatorDecision>;

export const COORDINATOR_PROMPT = jsonPrompt(
  {
    file: 'coordinator',
    role: 'coordinator',
    vars: { question: text, requestedLocale: text, allowClarification: flag, clarifications: text, userMemory: text },
    settings: ['allowClarification', 'requestedLocale', 'userMemory'],
    untrusted: { question: 'user_message', clarifications: 'clarifications', userMemory: 'user_memory' },
  },
  'CoordinatorDecision',
  CoordinatorDecision,
);

export function createCoordinatorActivities(deps: { llm: Llm; store: Pick<Store, 'saveDocument' | 'memory' | 'events'> }) {
  async function classifyRequest(input: {
    researchId: string;
    question: string;
    locale?: string;
    allowClarification: boolean;
    clarifications: string;
    /** Whose memory the prompt holds (absent: none). */
    memoryOf?: MemoryOwner;
  }): Promise<{ decision: CoordinatorDecision; usage: Usage }> {
    const key = Context.current().info.activityId;
    let decision: CoordinatorDecision;
    let usage: Usage;
    // A direct answer is shown as it is written (a request for research streams nothing).
    const draft = new DraftStream(deps.store.events, input.researchId, { part: 'answer' }, 'directAnswer');
    try {
      const r = await draft.around(
        deps.llm.structured(
          COORDINATOR_PROMPT,
          {
            question: input.question,
            requestedLocale: input.locale ?? '',
            allowClarification: input.allowClarification,
            clarifications: input.clarifications || '(none)',
            userMemory: await readUserMemory(deps.store, input.memoryOf),
          },
          { researchId: input.researchId, stream: draft },
        ),
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
    // A research topic that is the prompt's example (solar costs since 2010) is researched as asked.
    const echo = decision.researchTopic ? echoedExample(decision.researchTopic, EXAMPLE_TOPICS, input.question) : undefined;
    if (echo) {
      decision = { ...decision, researchTopic: input.question };
      await noteCorrection(
        deps.store,
        input.researchId,
        'coordinator',
        `${key}/topic`,
        "the question is researched as asked: the model's reading of it repeated its prompt's example",
      );
    }
    return { decision: sane({ ...decision, locale: settled.locale }, input), usage };
  }

  return { classifyRequest };
}

export const coordinator = defineRole({
  does: 'Answers small talk directly or sends the request to research; settles the locale; may ask one clarifying question.',
  prompts: { coordinator: COORDINATOR_PROMPT },
  parts: [],
  activities: createCoordinatorActivities,
});

/** The research topics of the prompt's examples. */
const EXAMPLE_TOPICS = exampleTexts(COORDINATOR_PROMPT.file, 'researchTopic');

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
