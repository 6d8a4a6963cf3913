// POST /v1/research/:id/report and GET /v1/research/:id/reports: a finished run's report rewritten
// from the same findings (a version of its own, written by reportRewriteWorkflow), and the list of
// the run's report versions. Version 1 is the run's own report.
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApiError, failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import { rewriteWorkflowId, type RewriteInput, type RewriteOptions } from '../../shared/report-versions';
import { Usage } from '../../shared/schemas';
import type { reportRewriteWorkflow } from '../../workflows/rewrite';
import type { Caller } from '../auth';
import { tenantRun, type ResearchContext } from './context';
import { checkModels } from '../model-check';

export interface RewriteStarted {
  id: string;
  version: number;
  status: 'writing' | 'ready' | 'failed';
  /** False when an Idempotency-Key matched a version asked for before. */
  created: boolean;
}

/** Starts a rewrite of the tenant's finished run: 404 for another's run, 409 while it has no report. */
export async function rewrite(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  options: RewriteOptions,
  idempotencyKey?: string,
  caller?: Caller,
): Promise<RewriteStarted> {
  if (options.model) await checkModels(ctx.deps.modelCatalog, [options.model], 'model');
  const { desc } = await tenantRun(ctx, id, tenant);
  if (desc.status.name !== 'COMPLETED' || !(await ctx.deps.store.getReport(id))) {
    throw new ApiError(409, 'no_report', `research run ${id} has no finished report to rewrite (${desc.status.name.toLowerCase()})`);
  }
  const requestHash = createHash('sha256')
    .update(JSON.stringify([tenant, id, options]))
    .digest('hex');
  const allocated = await ctx.deps.store.reportVersions.allocate({ researchId: id, tenant, options, requestHash, idempotencyKey });
  if (!allocated) throw new ApiError(409, 'no_report', `research run ${id} has no report to rewrite`);
  const { row, created } = allocated;
  if (!created && row.requestHash !== requestHash) {
    throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request');
  }
  // The version is written for whoever asks for it: their memory, when it is on for them.
  const memoryOf = caller?.memory ? { memoryOf: { tenant, userId: caller.userId } } : {};
  if (row.status === 'writing') await startRewrite(ctx, { researchId: id, tenant, version: row.version, options, ...memoryOf }, created);
  return { id, version: row.version, status: row.status, created };
}

/** The version's workflow; a retried request finds it started. A version whose workflow could not
 *  start says it failed (a retry with the same Idempotency-Key starts it again while it still writes). */
async function startRewrite(ctx: ResearchContext, ref: Omit<RewriteInput, 'retry'>, created: boolean): Promise<void> {
  const { taskQueue, retry } = ctx.deps;
  const input: RewriteInput = { ...ref, ...(retry ? { retry } : {}) };
  try {
    await ctx.deps.client.workflow.start<typeof reportRewriteWorkflow>('reportRewriteWorkflow', {
      taskQueue,
      workflowId: rewriteWorkflowId(ref.researchId, ref.version),
      args: [input],
      priority: { fairnessKey: ref.tenant },
      staticSummary: `Report version ${ref.version} of ${ref.researchId}`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    if (created) {
      const error = `the rewrite could not start: ${summarize(failureMessage(err), 200)}`;
      await ctx.deps.store.reportVersions
        .finish(ref.researchId, ref.version, 'failed', { promptTokens: 0, completionTokens: 0, costUsd: 0 }, error)
        .catch(() => undefined);
    }
    throw err;
  }
}

/** A run's usage: its status view's (which counts its unpriced tokens too), else the row's columns. */
function runUsage(run: { view: unknown; usage: Usage }): Usage {
  const fromView = Usage.safeParse((run.view as { usage?: unknown } | null)?.usage);
  return fromView.success ? fromView.data : run.usage;
}

/** The run's report versions: its own report (version 1, with the run's usage), then its rewrites. */
export async function reportVersions(ctx: ResearchContext, id: string, tenant: string) {
  await tenantRun(ctx, id, tenant);
  const { store } = ctx.deps;
  const [own, run, rewrites] = await Promise.all([store.reportVersions.original(id), store.runs.get(id), store.reportVersions.list(id)]);
  const first = own
    ? [
        {
          version: 1,
          status: 'ready' as const,
          options: {},
          title: own.title,
          createdAt: own.createdAt,
          ...(run ? { usage: runUsage(run) } : {}),
        },
      ]
    : [];
  return {
    id,
    versions: [
      ...first,
      ...rewrites.map((v) => ({
        version: v.version,
        status: v.status,
        options: v.options,
        ...(v.title ? { title: v.title } : {}),
        createdAt: v.createdAt,
        usage: v.usage,
        ...(v.error ? { error: v.error } : {}),
      })),
    ],
  };
}

/** A rewrite's report, once written: 404 for a version that does not exist, is still being written or failed. */
export async function versionReport(ctx: ResearchContext, id: string, version: number) {
  const { store } = ctx.deps;
  const row = await store.reportVersions.get(id, version);
  if (!row) throw new ApiError(404, 'not_found', `research run ${id} has no report version ${version}`);
  const report = row.status === 'ready' ? await store.getReport(id, version) : undefined;
  if (report) return report;
  if (row.status === 'failed')
    throw new ApiError(404, 'report_failed', `report version ${version} of ${id} failed: ${row.error ?? 'unknown'}`);
  throw new ApiError(404, 'report_not_ready', `report version ${version} of ${id} is still being written`);
}
