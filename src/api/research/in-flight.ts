// The runsInFlight quota: research runs a tenant started that have not ended (queued, reviewing,
// researching). Counted from Temporal's visibility, which learns of a new run a moment after it
// started, so the runs this process started in the last moments count as well unless they have
// ended: a burst of submits is checked one at a time per tenant against both.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { checkQuota, RecentlyMade, TenantLocks, type TenantQuotas } from '../quotas';

export class RunsInFlight {
  private readonly recent = new RecentlyMade();
  private readonly locks = new TenantLocks();

  constructor(
    private readonly client: Client,
    /** The service's task queue: its runs, not another service's on the same Temporal namespace. */
    private readonly taskQueue: string,
    private readonly quotas: TenantQuotas,
  ) {}

  /**
   * Runs `start` (which starts run `id`) unless the tenant has its quota of runs in flight: 429
   * naming the quota. A request for a run that exists (an Idempotency-Key's retry) passes.
   */
  async admit<T>(tenant: string, id: string, start: () => Promise<T>): Promise<T> {
    const limit = this.quotas.runsInFlight;
    if (!limit) return start();
    return this.locks.run(tenant, async () => {
      const open = await this.openRuns(tenant, limit);
      if (!open.has(id) && open.size >= limit && !(await this.exists(id))) checkQuota(this.quotas, 'runsInFlight', open.size);
      const result = await start();
      this.recent.add(id, tenant);
      return result;
    });
  }

  /** The tenant's open runs: what visibility lists (up to `limit` of them), and those started here it may not list yet. */
  private async openRuns(tenant: string, limit: number): Promise<Set<string>> {
    const ids = new Set<string>();
    const quoted = (v: string) => `'${v.replace(/'/g, '')}'`;
    const query = `WorkflowType = 'researchWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = ${quoted(this.taskQueue)} AND ResearchTenant = ${quoted(tenant)}`;
    for await (const w of this.client.workflow.list({ query, pageSize: limit + 1 })) {
      ids.add(w.workflowId);
      if (ids.size > limit) return ids;
    }
    for (const id of this.recent.of(tenant)) if (!ids.has(id) && (await this.stillOpen(id))) ids.add(id);
    return ids;
  }

  /** Whether run `id` exists (open or ended): an Idempotency-Key's retry is answered with it, quota or not. */
  private async exists(id: string): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(id).describe();
      return true;
    } catch {
      return false;
    }
  }

  /** Whether a run started here is still open (one that ended at once is not in flight); when unsure, it is. */
  private async stillOpen(id: string): Promise<boolean> {
    try {
      return (await this.client.workflow.getHandle(id).describe()).status.name === 'RUNNING';
    } catch (err) {
      return !(err instanceof WorkflowNotFoundError);
    }
  }
}
