// The run's place in its tenant's admission queue (TENANT_MAX_RUNS, see ../admission.ts): after
// the plan is accepted the run asks for a slot, waits in phase `queued` until it has one, and gives
// it back when it ends, however it ends. Runs started without a limit skip all of this.
import { plural } from '../../shared/plural';
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Plan } from '../../shared/schemas';
import { admissionWorkflow } from '../admission';
import { releaseSlotSignal, requestSlotSignal, slotGrantedSignal } from '../messages';
import { waitOrMove } from './new-build';
import type { RunState } from './run-state';
import { Slot } from './slot';

/** Tries to reach the queue (starting it when it is not running) before the run fails. */
const REACH_ATTEMPTS = 5;

/** Waits for a slot for the accepted `plan`. A run that waits on a versioned worker while a newer
 *  build becomes the target moves there (new-build.ts) and goes on waiting in the same place. */
export async function takeSlot(run: RunState, researchQuestion: string, plan: Plan): Promise<void> {
  if (!run.admission) return;
  const { maxRuns, queueId } = run.admission;
  const slot = new Slot(queueId);
  run.holdSlot(slot);
  setHandler(slotGrantedSignal, () => slot.grant());
  run.moveTo('queued');
  const carried = run.carried?.wait;
  const queuedAt = carried?.at === 'queue' ? carried.queuedAt : Date.now();
  if (carried?.at === 'queue') {
    // Carried over from the build the run waited on before.
    slot.markAsked();
    if (carried.granted) slot.grant();
  } else await askForSlot(run, slot, maxRuns);
  await waitOrMove(
    run,
    () => slot.granted,
    undefined,
    () => ({ at: 'queue', researchQuestion, plan, queuedAt, granted: slot.granted }),
  );
  const waited = Math.round((Date.now() - queuedAt) / 1000);
  if (waited >= 1) run.note(`Waited ${waited} s for a slot: tenant ${run.tenant} may research ${plural(maxRuns, 'run')} at once.`);
}

/** Asks the tenant's queue for a slot, starting the queue when nobody runs it. */
async function askForSlot(run: RunState, slot: Slot, maxRuns: number): Promise<void> {
  const ask = { runId: run.id, maxRuns, ...(run.options.priority === 'low' ? { low: true } : {}) };
  for (let attempt = 1; ; attempt++) {
    try {
      await getExternalWorkflowHandle(slot.queueId).signal(requestSlotSignal, ask);
      slot.markAsked();
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
        staticSummary: `Admission queue of tenant ${run.tenant}: ${plural(maxRuns, 'run')} at once`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}

/** Gives the slot (or the place in the queue) back; also when the run was cancelled. */
export async function giveSlotBack(run: RunState): Promise<void> {
  const slot = run.slot;
  // A run continuing on a newer build keeps its place: the queue knows it by its workflow id.
  if (!slot?.asked || run.leftForNewBuild) return;
  await CancellationScope.nonCancellable(async () => {
    try {
      await getExternalWorkflowHandle(slot.queueId).signal(releaseSlotSignal, { runId: run.id });
    } catch {
      // The queue has ended: it holds nothing of this run any more.
    }
  });
}
