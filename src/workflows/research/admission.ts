// The run's place in its tenant's admission queue (TENANT_MAX_RUNS, see ../admission.ts): after
// the plan is accepted the run asks for a slot, waits in phase `queued` until it has one, and gives
// it back when it ends, however it ends. Runs started without a limit skip all of this.
import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { admissionWorkflow } from '../admission';
import { releaseSlotSignal, requestSlotSignal, slotGrantedSignal } from '../messages';
import type { RunState } from './run-state';

/** Tries to reach the queue (starting it when it is not running) before the run fails. */
const REACH_ATTEMPTS = 5;

export class Slot {
  granted = false;
  asked = false;
  constructor(readonly queueId: string) {}
}

export async function takeSlot(run: RunState): Promise<void> {
  if (!run.admission) return;
  const { maxRuns, queueId } = run.admission;
  const slot = new Slot(queueId);
  run.holdSlot(slot);
  setHandler(slotGrantedSignal, () => void (slot.granted = true));
  run.moveTo('queued');
  const queuedAt = Date.now();
  const ask = { runId: run.id, maxRuns, ...(run.options.priority === 'low' ? { low: true } : {}) };
  for (let attempt = 1; ; attempt++) {
    try {
      await getExternalWorkflowHandle(slot.queueId).signal(requestSlotSignal, ask);
      slot.asked = true;
      break;
    } catch (err) {
      if (isCancellation(err) || attempt >= REACH_ATTEMPTS) throw err;
    }
    // Nobody runs the queue: start it (another run may be doing the same).
    try {
      await startChild(admissionWorkflow, {
        workflowId: slot.queueId,
        args: [{ tenant: run.tenant, maxRuns, running: [], waiting: [] }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `Admission queue of tenant ${run.tenant}: ${maxRuns} run(s) at once`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  await condition(() => slot.granted);
  const waited = Math.round((Date.now() - queuedAt) / 1000);
  if (waited >= 1) run.note(`Waited ${waited} s for a slot: tenant ${run.tenant} may research ${maxRuns} run(s) at once.`);
}

/** Gives the slot (or the place in the queue) back; also when the run was cancelled. */
export async function giveSlotBack(run: RunState): Promise<void> {
  const slot = run.slot;
  if (!slot?.asked) return;
  await CancellationScope.nonCancellable(async () => {
    try {
      await getExternalWorkflowHandle(slot.queueId).signal(releaseSlotSignal, { runId: run.id });
    } catch {
      // The queue has ended: it holds nothing of this run any more.
    }
  });
}
