// The long waits' loop, and the move to a newer build at one of them. A research run is pinned to
// the build of the workers it started on (versioning.ts): its code never changes under it. A wait
// for a person or a queue can outlast many deploys, so while the run waits, and the deployment's target
// version is another build, it continues as new on that build (its first task upgraded, pinned
// there from then on), carrying what the wait needs (CarriedRun) and no history. The server sets
// the flag that says so at a workflow task, and a waiting run has none: on a versioned worker the
// wait wakes every NEW_BUILD_CHECK (5 minutes) to look. Unversioned workers (no deployment) just wait.
import { allHandlersFinished, condition, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { CarriedWait, ResearchInput, ResearchResult } from '../../shared/schemas';
import type { RunState } from './run-state';

/**
 * Waits until `done()` (true) or `until`, in ms since the epoch (false; undefined: no end). On a
 * newer target build it does not return: the run continues there with what `carry()` gives.
 */
export async function waitOrMove(
  run: RunState,
  done: () => boolean,
  until: number | undefined,
  carry: () => CarriedWait,
): Promise<boolean> {
  const versioned = Boolean(workflowInfo().currentDeploymentVersion?.deploymentName);
  const every = run.newBuildCheckMs;
  for (;;) {
    if (done()) return true;
    if (versioned && workflowInfo().targetWorkerDeploymentVersionChanged) return moveToNewBuild(run, carry);
    const left = until === undefined ? undefined : until - Date.now();
    if (left !== undefined && left <= 0) return false;
    const wait = versioned ? Math.min(left ?? every, every) : left;
    if (wait === undefined) {
      await condition(done);
      return true;
    }
    if (await condition(done, wait)) return true;
  }
}

/** Continues the run as new on the deployment's target build, once its handlers are done and its
 *  row holds its last state. What it carries is taken last, with nothing awaited after it: an
 *  answer, a decision or a slot that came meanwhile goes with it. */
async function moveToNewBuild(run: RunState, carry: () => CarriedWait): Promise<never> {
  await condition(allHandlersFinished);
  await run.row.stop();
  const next = makeContinueAsNewFunc<(input: ResearchInput) => Promise<ResearchResult>>({ initialVersioningBehavior: 'AUTO_UPGRADE' });
  run.leaveForNewBuild();
  return next({ ...run.startInput, carried: run.carry(carry()) });
}
