// The rewrite workflow's PostgreSQL steps: what the run's own report was written from (stored with
// it, or derived for runs that ended before it was), and the version's end with its own usage.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../shared/errors';
import type { Usage } from '../shared/schemas';
import { maxUsage } from '../shared/plain';
import type { ReportBasis, Store } from './store';

export interface RewriteBasis extends ReportBasis {
  /** The locale of the run's own report (a rewrite without a locale of its own keeps it). */
  locale: string;
}

type VersionRef = { researchId: string; tenant: string; version: number };

/** The accepted step results of a run whose report kept no basis: for each step the plan names,
 *  its last attempt's stored result (a step's last attempt is the one the run accepted). */
export function derivedStepKeys(keys: string[], planStepIds: string[] | undefined): string[] {
  const last = new Map<string, { key: string; attempt: number }>();
  for (const key of keys) {
    const m = /^step\/(.+)\/(\d+)$/.exec(key);
    if (!m) continue;
    const [, id, attempt] = [m[0], m[1]!, Number(m[2])];
    if ((last.get(id)?.attempt ?? -1) < attempt) last.set(id, { key, attempt });
  }
  const order = planStepIds ?? [...last.keys()];
  return order.map((id) => last.get(id)?.key).filter((k): k is string => k !== undefined);
}

function planStepIds(plan: unknown): string[] | undefined {
  const steps = (plan as { steps?: { id?: unknown }[] } | null)?.steps;
  return Array.isArray(steps) ? steps.map((s) => s.id).filter((id): id is string => typeof id === 'string') : undefined;
}

function notesOf(view: unknown): string[] {
  const notes = (view as { notes?: unknown } | null)?.notes;
  return Array.isArray(notes) ? notes.filter((n): n is string => typeof n === 'string') : [];
}

export function createReportVersionActivities(deps: { store: Store }) {
  const { store } = deps;
  /** The version the API allocated, checked to be the tenant's and still to be written, and what
   *  its report is written from. */
  async function startRewrite(ref: VersionRef): Promise<RewriteBasis> {
    const row = await store.reportVersions.get(ref.researchId, ref.version);
    const run = await store.runs.get(ref.researchId);
    const own = await store.getReport(ref.researchId);
    if (!row || !run || !own || row.tenant !== ref.tenant) {
      throw ApplicationFailure.nonRetryable(`no report version ${ref.version} of ${ref.researchId} for this tenant`, ErrorType.NotFound);
    }
    const stored = await store.getReportBasis(ref.researchId);
    if (stored) return { ...stored, locale: own.locale };
    const steps = await store.getDocumentsOfKind(ref.researchId, 'step');
    return {
      question: run.question,
      stepKeys: derivedStepKeys(
        steps.map((d) => d.key),
        planStepIds(run.plan),
      ),
      notes: notesOf(run.view),
      locale: own.locale,
    };
  }

  /**
   * The version's end: ready or failed, with its usage: what the workflow summed, or what the
   * request log holds for this workflow run's calls when that is more (repairs, unusable answers).
   * The run's own usage is never touched.
   */
  async function finishRewrite(input: {
    researchId: string;
    version: number;
    status: 'ready' | 'failed';
    usage: Usage;
    error?: string | undefined;
  }): Promise<Usage> {
    const runId = Context.current().info.workflowExecution?.runId ?? 'standalone';
    const logged = await store.reportVersions.spentByCalls(input.researchId, `${runId}/`);
    const usage = maxUsage(input.usage, logged);
    await store.reportVersions.finish(input.researchId, input.version, input.status, usage, input.error);
    return usage;
  }

  return { startRewrite, finishRewrite };
}
