// The judge: does a step's stored result do what the step asked, with claims backed by sources?
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import type { JudgeVerdict } from '../../shared/llm-outputs';
import { summarize, type PlanStep, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { DOC_CHARS } from './cited';

export function createJudgeActivities(deps: { llm: Llm; store: Store }) {
  async function judgeStep(input: {
    researchId: string;
    key: string;
    step: PlanStep;
    question: string;
  }): Promise<{ verdict: JudgeVerdict; usage: Usage }> {
    const [doc] = await deps.store.getDocuments(input.researchId, [input.key]);
    if (!doc) throw ApplicationFailure.nonRetryable(`no step result stored under ${input.key}`, ErrorType.NotFound);
    const r = await deps.llm.structured(
      PROMPTS.judge,
      {
        question: input.question,
        stepTitle: input.step.title,
        stepDescription: input.step.description,
        result: doc.content.slice(0, DOC_CHARS),
        citedSources: doc.sourceIds.length,
      },
      { researchId: input.researchId },
    );
    // The run's event log shows each check and its verdict (the web page's and CLI's timelines).
    const attempt = Number(input.key.split('/').at(-1)) || 1;
    await deps.store.events.append(input.researchId, [
      {
        key: `verdict:${input.key}`,
        type: 'verdict',
        data: {
          step: input.step.id,
          attempt,
          passed: r.output.passed,
          ...(r.output.feedback ? { feedback: summarize(r.output.feedback, 300) } : {}),
        },
      },
    ]);
    return { verdict: r.output, usage: r.usage };
  }

  return { judgeStep };
}
