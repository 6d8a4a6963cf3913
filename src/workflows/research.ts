import {
  ApplicationFailure,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { addUsage, summarize, ZERO_USAGE, type Phase, type ResearchInput, type ResearchResult, type RunStatus } from '../shared/schemas';
import { getStatusQuery, type ResearchStatusView } from './messages';
import { ResearchPhaseKey, ResearchStatusKey, ResearchTenantKey } from './search-attributes';

// LLM calls: each attempt is one HTTP call (the client does not retry); 429 waits for
// Retry-After via nextRetryDelay, everything else transient backs off up to a minute.
const { llmStructured } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

const { recordRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export async function researchWorkflow(input: ResearchInput): Promise<ResearchResult> {
  const { workflowId } = workflowInfo();
  const view: ResearchStatusView = { status: 'running', phase: 'coordinating', question: input.question, usage: ZERO_USAGE };
  setHandler(getStatusQuery, () => view);

  const moveTo = (phase: Phase, status: RunStatus = view.status) => {
    view.phase = phase;
    view.status = status;
    upsertSearchAttributes([
      { key: ResearchPhaseKey, value: phase },
      { key: ResearchStatusKey, value: status },
    ]);
    setCurrentDetails(`**${status}** · phase: ${phase}\n\nQuestion: ${summarize(input.question, 200)}`);
  };
  upsertSearchAttributes([{ key: ResearchTenantKey, value: input.tenant }]);
  moveTo('coordinating');

  try {
    const decision = await llmStructured.executeWithOptions(
      { summary: 'coordinator: classify the request and detect its locale' },
      [
        {
          researchId: workflowId,
          role: 'coordinator',
          prompt: 'coordinator',
          schema: 'CoordinatorDecision',
          vars: {
            question: input.question,
            localeHint: input.options.locale ? `The user asked for the report in ${input.options.locale}; use that tag.` : '',
          },
          untrustedVars: ['question'],
        },
      ],
    );
    view.usage = addUsage(view.usage, decision.usage);
    const locale = input.options.locale ?? decision.output.locale;
    view.locale = locale;
    const direct = decision.output.action === 'answer_directly';
    const answer = direct ? (decision.output.directAnswer ?? '') : (decision.output.researchTopic ?? input.question);

    await recordRun.executeWithOptions({ summary: 'store: record the run' }, [
      {
        id: workflowId,
        tenant: input.tenant,
        question: input.question,
        status: 'completed',
        outcome: direct ? 'answered_directly' : 'research_accepted',
        locale,
        answer,
        usage: view.usage,
      },
    ]);
    moveTo('done', 'completed');
    return {
      id: workflowId,
      status: 'completed',
      outcome: direct ? 'answered_directly' : 'research_accepted',
      locale,
      summary: summarize(answer),
      usage: view.usage,
    };
  } catch (err) {
    view.error = summarize(err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err));
    moveTo('done', 'failed');
    await recordRun.executeWithOptions({ summary: 'store: record the failure' }, [
      { id: workflowId, tenant: input.tenant, question: input.question, status: 'failed', error: view.error, usage: view.usage },
    ]);
    if (err instanceof ApplicationFailure) throw err;
    throw ApplicationFailure.nonRetryable(view.error, 'ResearchFailed');
  }
}
