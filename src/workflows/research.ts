// The research workflow: coordinator → rewrite/expand → background → plan → human review →
// research team (child workflows) with reflection → report → persist. Deterministic code only:
// every outside call is an activity or a child, and every loop is bounded by an option.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { StepOutput } from '../activities/research';
import { addUsage, durationToMs, summarize, ZERO_USAGE, type Phase, type Plan, type ResearchInput, type ResearchResult, type RunStatus, type Usage } from '../shared/schemas';
import {
  answerClarificationSignal,
  approvePlanSignal,
  getStatusQuery,
  revisePlanSignal,
  type IgnoredSignal,
  type ResearchStatusView,
  type StepView,
} from './messages';
import { ResearchPhaseKey, ResearchStatusKey, ResearchStepCountKey, ResearchTenantKey } from './search-attributes';
import { failureMessage } from '../shared/errors';
import { LLM_OPTIONS, SEARCH_OPTIONS, STORE_OPTIONS } from './activity-options';
import { coderWorkflow, researcherWorkflow, searchQueue, type StepInput } from './steps';

const llm = proxyActivities<Activities>(LLM_OPTIONS);
const io = proxyActivities<Activities>(STORE_OPTIONS);
const search = proxyActivities<Activities>(SEARCH_OPTIONS);

const MAX_PLAN_ATTEMPTS = 3;
const MAX_IGNORED_SIGNALS = 20;

type ReviewDecision = { kind: 'approve' } | { kind: 'revise'; feedback: string };

export async function researchWorkflow(input: ResearchInput): Promise<ResearchResult> {
  const { workflowId, startTime } = workflowInfo();
  const opts = input.options;
  const deadlineAt = opts.deadline ? startTime.getTime() + durationToMs(opts.deadline) : undefined;
  const view: ResearchStatusView = { status: 'running', phase: 'coordinating', question: input.question, usage: ZERO_USAGE, notes: [], ignoredSignals: [] };
  let locale = opts.locale ?? 'en-US';
  let review: ReviewDecision | undefined;
  let clarificationAnswer: string | undefined;

  const ignore = (entry: Omit<IgnoredSignal, 'at'>) => {
    view.ignoredSignals.push({ ...entry, at: Date.now() });
    if (view.ignoredSignals.length > MAX_IGNORED_SIGNALS) view.ignoredSignals.shift();
  };
  setHandler(getStatusQuery, () => view);
  setHandler(approvePlanSignal, ({ planVersion }) => {
    if (view.phase !== 'reviewing' || review) return ignore({ signal: 'approvePlan', planVersion, reason: 'no plan is waiting for review' });
    if (planVersion !== view.plan?.version) return ignore({ signal: 'approvePlan', planVersion, reason: `stale: the plan under review is version ${view.plan?.version}` });
    review = { kind: 'approve' };
  });
  setHandler(revisePlanSignal, ({ planVersion, feedback }) => {
    if (view.phase !== 'reviewing' || review) return ignore({ signal: 'revisePlan', planVersion, reason: 'no plan is waiting for review' });
    if (planVersion !== view.plan?.version) return ignore({ signal: 'revisePlan', planVersion, reason: `stale: the plan under review is version ${view.plan?.version}` });
    if ((view.plan?.revisions ?? 0) >= opts.maxPlanRevisions) return ignore({ signal: 'revisePlan', planVersion, reason: `the plan was already revised ${opts.maxPlanRevisions} times (maxPlanRevisions)` });
    review = { kind: 'revise', feedback: String(feedback ?? '').slice(0, 4_000) };
  });
  setHandler(answerClarificationSignal, ({ answer }) => {
    if (view.clarificationQuestion === undefined || clarificationAnswer !== undefined) return ignore({ signal: 'answerClarification', reason: 'no question is waiting for an answer' });
    clarificationAnswer = String(answer ?? '').slice(0, 4_000);
  });

  const moveTo = (phase: Phase, status: RunStatus = 'running') => {
    view.phase = phase;
    view.status = status;
    upsertSearchAttributes([
      { key: ResearchPhaseKey, value: phase },
      { key: ResearchStatusKey, value: status },
    ]);
    publishDetails();
  };
  const publishDetails = () => {
    const lines = [`**${view.status}** · phase **${view.phase}** · tokens ${view.usage.promptTokens + view.usage.completionTokens} · $${view.usage.costUsd.toFixed(4)}`, '', `Question: ${summarize(input.question, 200)}`];
    if (view.plan) {
      lines.push('', `Plan v${view.plan.version}: ${view.plan.title}`);
      for (const s of view.plan.steps) lines.push(`- [${s.status}] ${s.id} (${s.type}, attempts ${s.attempts}): ${s.title}`);
    }
    if (view.notes.length) lines.push('', ...view.notes.map((n) => `> ${n}`));
    setCurrentDetails(lines.join('\n'));
  };
  const addCost = (u: Usage) => {
    view.usage = addUsage(view.usage, u);
  };
  const budgetSpent = (): string | undefined => {
    const tokens = view.usage.promptTokens + view.usage.completionTokens;
    if (opts.maxTokens !== undefined && tokens >= opts.maxTokens) return `the token budget (${opts.maxTokens}) was spent`;
    if (opts.maxCostUsd !== undefined && view.usage.costUsd >= opts.maxCostUsd) return `the cost budget ($${opts.maxCostUsd}) was spent`;
    if (deadlineAt !== undefined && Date.now() >= deadlineAt) return `the time budget (${opts.deadline}) ran out`;
    return undefined;
  };
  const record = (status: RunStatus, extra: { outcome?: string; answer?: string; error?: string } = {}) =>
    io.recordRun.executeWithOptions({ summary: `store: run ${status}, phase ${view.phase}` }, [
      { id: workflowId, tenant: input.tenant, question: input.question, status, phase: view.phase, locale, usage: view.usage, plan: view.plan, planVersion: view.plan?.version, ...extra },
    ]);
  const finish = (outcome: ResearchResult['outcome'], summary: string, status: 'completed' | 'cancelled' = 'completed'): ResearchResult => ({
    id: workflowId,
    status,
    outcome,
    locale,
    summary: summarize(summary),
    usage: view.usage,
    ...(view.plan ? { planVersion: view.plan.version, steps: view.plan.steps.map((s) => ({ id: s.id, status: s.status, attempts: s.attempts })) } : {}),
    ...(view.report ? { references: view.report.references, removedCitations: view.report.removedCitations } : {}),
    notes: view.notes.slice(0, 10),
  });

  upsertSearchAttributes([{ key: ResearchTenantKey, value: input.tenant }]);
  moveTo('coordinating');

  try {
    // 1. Coordinator, with optional clarifying questions answered by signal.
    const clarifications: string[] = [];
    let topic = input.question;
    for (let round = 0; ; round++) {
      const { decision, usage } = await llm.classifyRequest.executeWithOptions({ summary: 'coordinator: classify the request, detect its locale' }, [
        { researchId: workflowId, question: input.question, allowClarification: round < opts.maxClarifications, clarifications: clarifications.join('\n'), ...(opts.locale ? { locale: opts.locale } : {}) },
      ]);
      addCost(usage);
      locale = opts.locale ?? decision.locale;
      view.locale = locale;
      if (decision.action === 'answer_directly') {
        const answer = decision.directAnswer ?? '';
        moveTo('done', 'completed');
        await record('completed', { outcome: 'answered_directly', answer });
        return finish('answered_directly', answer);
      }
      topic = decision.researchTopic ?? input.question;
      if (!decision.clarificationQuestion || round >= opts.maxClarifications) break;
      view.clarificationQuestion = decision.clarificationQuestion;
      clarificationAnswer = undefined;
      moveTo('coordinating', 'awaiting_review');
      const answered = await condition(() => clarificationAnswer !== undefined, durationToMs(opts.reviewTimeout));
      clarifications.push(`Q: ${decision.clarificationQuestion}\nA: ${answered ? clarificationAnswer : '(no answer; proceed with your best interpretation)'}`);
      view.clarificationQuestion = undefined;
      moveTo('coordinating');
    }

    // 2. Rewrite and expand; 3. background investigation (searches in parallel).
    moveTo('planning');
    const { expansion, usage: expUsage } = await llm.expandQueries.executeWithOptions({ summary: `rewrite: question and ${opts.queryCount} queries` }, [
      { researchId: workflowId, question: `${input.question}\n(Coordinator's reading: ${topic})`, locale, count: opts.queryCount },
    ]);
    addCost(expUsage);
    const researchQuestion = expansion.researchQuestion;
    const searches = await Promise.allSettled(
      expansion.queries.map((query) => search.webSearch.executeWithOptions({ summary: `search: ${summarize(query, 80)}`, taskQueue: searchQueue() }, [{ researchId: workflowId, query }])),
    );
    const backgroundSources: string[] = [];
    const searchErrors: string[] = [];
    for (const s of searches) {
      if (s.status === 'fulfilled') {
        for (const r of s.value.results) if (!backgroundSources.includes(r.sourceId)) backgroundSources.push(r.sourceId);
      } else {
        if (isCancellation(s.reason)) throw s.reason;
        searchErrors.push(failureMessage(s.reason));
      }
    }
    if (searchErrors.length) view.notes.push(`Background search failed for ${searchErrors.length} of ${expansion.queries.length} queries: ${summarize(searchErrors[0]!, 160)}`);
    const background = await llm.writeBackground.executeWithOptions({ summary: `background brief from ${backgroundSources.length} sources` }, [
      { researchId: workflowId, question: researchQuestion, locale, sourceIds: backgroundSources, searchErrors },
    ]);
    addCost(background.usage);

    // 4. Planner (validated, re-asked with the problems) and 5. review by signals.
    let feedback = '';
    let revisions = 0;
    let plan: Plan;
    const pendingWrites: Promise<void>[] = [];
    for (;;) {
      plan = await makePlan(researchQuestion, feedback);
      const version = (view.plan?.version ?? 0) + 1;
      view.plan = {
        version,
        title: plan.title,
        thought: summarize(plan.thought, 400),
        hasEnoughContext: plan.hasEnoughContext,
        revisions,
        revisionsLeft: opts.maxPlanRevisions - revisions,
        steps: plan.steps.map((s) => ({ id: s.id, title: summarize(s.title, 160), type: s.type, dependsOn: s.dependsOn, status: 'pending', attempts: 0, notes: [] })),
      };
      upsertSearchAttributes([{ key: ResearchStepCountKey, value: plan.steps.length }]);
      // Stored in the background: the research need not wait for this write.
      pendingWrites.push(record('running'));
      if (plan.hasEnoughContext || opts.autoAcceptPlan) break;
      review = undefined;
      moveTo('reviewing', 'awaiting_review');
      const decided = await condition(() => review !== undefined, durationToMs(opts.reviewTimeout));
      if (!decided) {
        view.notes.push(`No review within ${opts.reviewTimeout}: the plan was ${opts.onReviewTimeout === 'approve' ? 'approved' : 'cancelled'} automatically.`);
        if (opts.onReviewTimeout === 'cancel') {
          moveTo('done', 'cancelled');
          await record('cancelled', { outcome: 'review_timeout' });
          return finish('cancelled_at_review', `Cancelled: the plan was not reviewed within ${opts.reviewTimeout}.`, 'cancelled');
        }
        break;
      }
      const decision = review as ReviewDecision | undefined;
      if (!decision || decision.kind === 'approve') break;
      feedback = decision.feedback;
      revisions++;
      moveTo('planning');
    }

    // 6. Research team: child workflows in dependency order, at most maxConcurrentSteps at once.
    const accepted = new Map<string, StepOutput>();
    if (!plan.hasEnoughContext) {
      moveTo('researching');
      await runTeam(plan, researchQuestion, accepted);
    }

    // 10. Reporter.
    moveTo('reporting');
    const stepKeys = plan.steps.map((s) => accepted.get(s.id)?.key).filter((k): k is string => k !== undefined);
    const report = await llm.writeReport.executeWithOptions({ summary: `reporter: report from ${stepKeys.length} step results` }, [
      { researchId: workflowId, question: researchQuestion, locale, stepKeys, notes: view.notes },
    ]);
    addCost(report.usage);
    view.report = { title: report.title, references: report.references, removedCitations: report.removedCitations };
    if (report.removedCitations.length) view.notes.push(`Removed ${report.removedCitations.length} citation(s) that pointed at no retrieved source: [${report.removedCitations.join('], [')}].`);

    // 11. Persist.
    await Promise.all(pendingWrites);
    moveTo('done', 'completed');
    await record('completed', { outcome: 'report', answer: report.title });
    return finish('report', report.summary);
  } catch (err) {
    if (isCancellation(err)) {
      // Keep what was stored; mark the run cancelled even though this scope is being cancelled.
      await CancellationScope.nonCancellable(async () => {
        view.error = 'cancelled';
        moveTo('done', 'cancelled');
        await record('cancelled', { error: 'cancelled by request' });
      });
      throw err;
    }
    view.error = summarize(failureMessage(err));
    moveTo('done', 'failed');
    await record('failed', { error: view.error });
    if (err instanceof ApplicationFailure) throw err;
    throw ApplicationFailure.nonRetryable(view.error, 'ResearchFailed');
  }

  async function makePlan(question: string, reviewerFeedback: string): Promise<Plan> {
    let problems: string[] = [];
    for (let attempt = 1; attempt <= MAX_PLAN_ATTEMPTS; attempt++) {
      const r = await llm.planResearch.executeWithOptions({ summary: `planner: attempt ${attempt}${reviewerFeedback ? ' with review feedback' : ''}` }, [
        { researchId: workflowId, question, locale, maxSteps: opts.maxSteps, feedback: reviewerFeedback, problems },
      ]);
      addCost(r.usage);
      if (r.problems.length === 0) return r.plan;
      problems = r.problems;
      view.notes.push(`Planner attempt ${attempt} was invalid: ${summarize(problems.join('; '), 200)}`);
    }
    throw ApplicationFailure.nonRetryable(`the planner gave no valid plan in ${MAX_PLAN_ATTEMPTS} attempts: ${problems.join('; ')}`, 'InvalidPlan');
  }

  async function runTeam(plan: Plan, question: string, accepted: Map<string, StepOutput>): Promise<void> {
    const steps = view.plan!.steps;
    const byId = new Map(plan.steps.map((s) => [s.id, s]));
    let running = 0;
    let changes = 0;
    const tasks: Promise<void>[] = [];
    for (;;) {
      for (const s of steps) {
        if (s.status !== 'pending') continue;
        const blocked = s.dependsOn.find((d) => steps.find((x) => x.id === d)?.status === 'failed' || steps.find((x) => x.id === d)?.status === 'skipped');
        if (blocked) {
          s.status = 'skipped';
          s.summary = `skipped: step ${blocked} it depends on did not complete`;
        }
      }
      const spent = budgetSpent();
      if (spent) {
        for (const s of steps.filter((x) => x.status === 'pending')) {
          s.status = 'skipped';
          s.summary = `skipped: ${spent}`;
        }
        if (!view.notes.some((n) => n.startsWith('Research stopped early'))) view.notes.push(`Research stopped early: ${spent}. The report is written from what was found.`);
      }
      for (const s of steps) {
        if (running >= opts.maxConcurrentSteps) break;
        if (s.status !== 'pending' || !s.dependsOn.every((d) => accepted.has(d))) continue;
        s.status = 'running';
        s.startedAt = Date.now();
        running++;
        tasks.push(
          runStep(s, byId.get(s.id)!, question, accepted).finally(() => {
            s.endedAt = Date.now();
            running--;
            changes++;
            publishDetails();
          }),
        );
      }
      publishDetails();
      if (running === 0) {
        // Nothing runs and nothing can start: every step is settled (validation rules out cycles).
        for (const s of steps.filter((x) => x.status === 'pending')) {
          s.status = 'skipped';
          s.summary = 'skipped: its dependencies never completed';
        }
        break;
      }
      const seen = changes;
      try {
        await condition(() => changes !== seen);
      } catch (err) {
        // Cancelled: the running children are being cancelled with this scope; wait until they
        // have stopped, so that the run never closes while a step still works.
        await Promise.allSettled(tasks);
        throw err;
      }
    }
    await Promise.all(tasks);
  }

  async function runStep(s: StepView, step: Plan['steps'][number], question: string, accepted: Map<string, StepOutput>): Promise<void> {
    let feedback = '';
    let last: StepOutput | undefined;
    try {
      for (let attempt = 1; ; attempt++) {
        if (attempt > 1) {
          const spent = budgetSpent();
          if (spent) {
            s.notes.push(`not retried: ${spent}`);
            break;
          }
        }
        s.attempts = attempt;
        const childInput: StepInput = {
          researchId: workflowId,
          question,
          locale,
          step,
          attempt,
          feedback,
          dependencyKeys: step.dependsOn.map((d) => accepted.get(d)!.key),
          maxToolRounds: opts.maxToolRounds,
          maxCodeAttempts: opts.maxCodeAttempts,
        };
        last = await executeChild(step.type === 'research' ? researcherWorkflow : coderWorkflow, {
          workflowId: `${workflowId}/step/${step.id}`,
          args: [childInput],
          staticSummary: `${step.type === 'research' ? 'researcher' : 'coder'} · step ${step.id} · attempt ${attempt}: ${summarize(step.title, 80)}`,
        });
        addCost(last.usage);
        let passed: boolean;
        try {
          const judged = await llm.judgeStep.executeWithOptions({ summary: `judge: step ${step.id} attempt ${attempt}` }, [
            { researchId: workflowId, key: last.key, step, question },
          ]);
          addCost(judged.usage);
          passed = judged.verdict.passed;
          feedback = judged.verdict.feedback;
        } catch (err) {
          if (isCancellation(err)) throw err;
          s.notes.push(`judge error on attempt ${attempt}, counted as a pass: ${summarize(failureMessage(err), 160)}`);
          passed = true;
        }
        if (passed) break;
        if (attempt > opts.maxReflectionAttempts) {
          s.notes.push(`passed after ${attempt} attempts without the judge's approval: ${summarize(feedback, 200)}`);
          break;
        }
      }
      accepted.set(step.id, last!);
      s.status = 'completed';
      s.summary = last!.summary;
    } catch (err) {
      if (isCancellation(err)) throw err;
      s.status = 'failed';
      s.summary = `failed: ${summarize(failureMessage(err), 200)}`;
      view.notes.push(`Step ${step.id} failed: ${summarize(failureMessage(err), 160)}`);
    }
  }
}
