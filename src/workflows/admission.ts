// A tenant's admission queue: at most `maxRuns` of the tenant's runs research at once
// (TENANT_MAX_RUNS); the others wait in order (normal before low priority, then first come). One
// workflow per tenant and task queue (`admission/<queue>/<tenant>`), started by the first run that
// needs it and left running (parent close policy ABANDON). A slot whose run has ended without
// giving it back (terminated) is found by signalling the runs while others wait: a signal to an
// ended run fails. When nothing has happened for a while the queue ends; the next run starts it.
import { condition, continueAsNew, getExternalWorkflowHandle, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
import { admissionQueueQuery, releaseSlotSignal, requestSlotSignal, slotGrantedSignal } from './messages';

export interface AdmissionState {
  tenant: string;
  maxRuns: number;
  running: string[];
  waiting: { runId: string; low: boolean }[];
}

/** How often the runs holding slots are checked while others wait. */
const CHECK_EVERY = '1 minute';
/** How long an empty queue stays before it ends. */
const IDLE_FOR = '10 minutes';

class AdmissionQueue {
  constructor(readonly s: AdmissionState) {}

  request(runId: string, low: boolean): void {
    if (this.s.running.includes(runId) || this.s.waiting.some((w) => w.runId === runId)) return;
    // Normal runs go before low ones; first come, first served within each.
    const at = low ? this.s.waiting.length : this.s.waiting.findIndex((w) => w.low);
    this.s.waiting.splice(at < 0 ? this.s.waiting.length : at, 0, { runId, low });
  }

  release(runId: string): void {
    this.s.running = this.s.running.filter((r) => r !== runId);
    this.s.waiting = this.s.waiting.filter((w) => w.runId !== runId);
  }

  /** Runs that get a slot now (moved to running). */
  grant(): string[] {
    const out: string[] = [];
    while (this.s.waiting.length && this.s.running.length < this.s.maxRuns) {
      const next = this.s.waiting.shift()!;
      this.s.running.push(next.runId);
      out.push(next.runId);
    }
    return out;
  }

  get canGrant(): boolean {
    return this.s.waiting.length > 0 && this.s.running.length < this.s.maxRuns;
  }

  get empty(): boolean {
    return !this.s.running.length && !this.s.waiting.length;
  }
}

export async function admissionWorkflow(state: AdmissionState): Promise<void> {
  const q = new AdmissionQueue(state);
  setHandler(requestSlotSignal, (m) => {
    // TENANT_MAX_RUNS changed (a deploy): the newest run's limit holds from now on.
    if (m.maxRuns) state.maxRuns = m.maxRuns;
    q.request(m.runId, m.low ?? false);
  });
  setHandler(releaseSlotSignal, (m) => q.release(m.runId));
  setHandler(admissionQueueQuery, () => ({ maxRuns: state.maxRuns, running: [...q.s.running], waiting: q.s.waiting.map((w) => w.runId) }));

  /** Tells a run it may research; a run that has ended gives its slot back. */
  const tell = async (runId: string) => {
    try {
      await getExternalWorkflowHandle(runId).signal(slotGrantedSignal);
    } catch (err) {
      if (isCancellation(err)) throw err;
      q.release(runId);
    }
  };

  for (;;) {
    for (const runId of q.grant()) await tell(runId);
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof admissionWorkflow>(q.s);
    if (q.empty) {
      if (!(await condition(() => !q.empty, IDLE_FOR))) return;
      continue;
    }
    const changed = await condition(() => q.canGrant, CHECK_EVERY);
    // Others wait and no slot came free: check that the runs holding slots still run.
    if (!changed && q.s.waiting.length) await Promise.all([...q.s.running].map(tell));
  }
}
