// Runs this API process has seen open on Temporal lately, with what their description gave that
// never changes (tenant, budget memo). A status read of such a run answers from the run's row
// alone: its view is the workflow's own at its last write, and the run's own endings write the
// row, so what a describe could add is only an end the row never hears of (an operator's
// terminate, a workflow timeout). At a thousand runs polled every few seconds, the describes were
// most of a status read's cost, on the API and on the Temporal server (74 a run at 1,000 runs, two
// thirds of the server's requests).
//
// Such ends are found for all runs at once: while reads come in, the process lists the service's
// runs that closed lately (one visibility query every OPEN_RECHECK_MS / 3) and forgets those it
// knows, so their next read describes them. A run is taken to be open while a sweep has been made
// within OPEN_RECHECK_MS that would have listed its end; when sweeps fail (visibility down), each
// run is described again once OPEN_RECHECK_MS has passed since it was last seen open.
import type { Client } from '@temporalio/client';
import type { BudgetView } from '../../shared/messages';

/** How long a run seen open is taken to be open without asking Temporal again. */
export const OPEN_RECHECK_MS = 15_000;
/** How late visibility may list a run's close: each sweep looks this far behind the one before. */
const VISIBILITY_LAG_MS = 60_000;
/** Runs remembered at most (the oldest forgotten first): a bound on memory, not on correctness. */
const MAX_REMEMBERED = 20_000;

interface Seen {
  at: number;
  tenant: string;
  budget: BudgetView | undefined;
}

/** Ids of the service's runs that closed after `since`, as Temporal's visibility lists them. */
export type ListClosed = (since: Date) => AsyncIterable<string>;

export function closedRuns(client: Client, taskQueue: string): ListClosed {
  const queue = taskQueue.replace(/'/g, '');
  return async function* (since) {
    const query = `WorkflowType = 'researchWorkflow' AND TaskQueue = '${queue}' AND ExecutionStatus != 'Running' AND CloseTime > '${since.toISOString()}'`;
    for await (const w of client.workflow.list({ query, pageSize: 1000 })) yield w.workflowId;
  };
}

export class OpenRuns {
  private readonly seen = new Map<string, Seen>();
  /** Closes from this time on are known from the sweeps since (undefined: no unbroken run of sweeps). */
  private coveredFrom: number | undefined;
  /** When the last sweep that succeeded began. */
  private sweptAt = -Infinity;
  private sweeping = false;

  constructor(
    private readonly recheckMs = OPEN_RECHECK_MS,
    private readonly listClosed?: ListClosed,
  ) {}

  /** The tenant's run, if it is known to be open: what its description gave. Starts a sweep when one is due. */
  knownOpen(id: string, tenant: string, now = Date.now()): { budget: BudgetView | undefined } | undefined {
    this.sweepIfDue(now);
    const s = this.seen.get(id);
    if (!s || s.tenant !== tenant) return undefined;
    const described = now - s.at < this.recheckMs;
    const swept = this.coveredFrom !== undefined && s.at >= this.coveredFrom && now - this.sweptAt < this.recheckMs;
    return described || swept ? { budget: s.budget } : undefined;
  }

  /** Temporal described the run: open (remembered from now) or ended (forgotten). */
  described(id: string, tenant: string, open: boolean, budget: BudgetView | undefined, now = Date.now()): void {
    this.seen.delete(id);
    if (!open) return;
    this.seen.set(id, { at: now, tenant, budget });
    if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
  }

  /** Lists the runs closed since the last sweep began (less the visibility lag) and forgets them. */
  private sweepIfDue(now: number): void {
    if (!this.listClosed || this.sweeping || !this.seen.size || now - this.sweptAt < this.recheckMs / 3) return;
    this.sweeping = true;
    const unbroken = this.coveredFrom !== undefined && now - this.sweptAt < this.recheckMs;
    const from = (unbroken ? this.sweptAt : now) - VISIBILITY_LAG_MS;
    void this.sweep(from, now, unbroken).finally(() => (this.sweeping = false));
  }

  private async sweep(from: number, startedAt: number, unbroken: boolean): Promise<void> {
    try {
      for await (const id of this.listClosed!(new Date(from))) this.seen.delete(id);
    } catch {
      // Visibility did not answer: runs are described again as their recheck time comes.
      this.coveredFrom = undefined;
      return;
    }
    if (!unbroken) this.coveredFrom = from;
    this.sweptAt = startedAt;
  }
}
