// Runs this API process has seen open on Temporal lately, with what their description gave that
// never changes (tenant, budget memo). A status read of such a run within OPEN_RECHECK_MS answers
// from the run's row alone: its view is the workflow's own at its last write, and the run's own
// endings write the row, so what a describe could add is only an end the row never hears of (an
// operator's terminate, a workflow timeout), which is then seen at most that much later. At a
// thousand runs polled every few seconds, the describes were most of the status read's cost, on
// the API and on the Temporal server.
import type { BudgetView } from '../../shared/messages';

/** How long a run seen open is taken to be open without asking Temporal again. */
export const OPEN_RECHECK_MS = 15_000;
/** Runs remembered at most (the oldest forgotten first): a bound on memory, not on correctness. */
const MAX_REMEMBERED = 20_000;

interface Seen {
  at: number;
  tenant: string;
  budget: BudgetView | undefined;
}

export class OpenRuns {
  private readonly seen = new Map<string, Seen>();

  constructor(private readonly recheckMs = OPEN_RECHECK_MS) {}

  /** The tenant's run, if it was seen open within the recheck time: what its description gave. */
  recent(id: string, tenant: string, now = Date.now()): { budget: BudgetView | undefined } | undefined {
    const s = this.seen.get(id);
    if (!s || s.tenant !== tenant || now - s.at >= this.recheckMs) return undefined;
    return { budget: s.budget };
  }

  /** Temporal described the run: open (remembered from now) or ended (forgotten). */
  described(id: string, tenant: string, open: boolean, budget: BudgetView | undefined, now = Date.now()): void {
    this.seen.delete(id);
    if (!open) return;
    this.seen.set(id, { at: now, tenant, budget });
    if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
  }
}
