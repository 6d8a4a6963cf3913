// Runs of earlier builds after a new one starts: never left waiting for a build that no longer runs.
// The new build makes itself the current version of the deployment (new runs start on it), then
// looks at every open run whose next task would go to another build, when it starts and every half
// minute after:
//
// - pinned to an earlier build that still has workers: left to them (a worker of the deployment,
//   TEMPORAL_WORKER_PROMOTE: workers of that build polled within the last two minutes). A run at a
//   long wait moves to the new build there (src/workflows/research/new-build.ts).
// - pinned to an earlier build `dev` can serve (its bundle is still cached: bundles are kept by
//   content in node_modules/.cache and survive a pull): served again by workers in this process,
//   its workflow code and today's activities, until its last run has closed or moved.
// - otherwise, or unversioned: if its history replays on the new code it is pinned to the new
//   build as it is; if not, it goes back to the last point the new code replays to (a reset, its
//   later signals and updates applied again) and on from there, with a line in its timeline.
// - a run whose workflow tasks so far were all this build's (none yet: its first task is still to
//   come) is not replayed: its tasks go to the current build, this one.
//
// A run found to go on here is not described again while it is open, and the rest are described
// a few at a time: a worker with a thousand runs in flight looks at the new ones only. A replay
// runs on the main thread (the SDK's replay worker is in debug mode), beside the API and the
// activities: none is made that is not needed.
//
// `dev` is a version named after its workflow code (`wf-<bundle key>`); a stopped dev leaves no
// workers behind, so its earlier builds are served from their bundles or moved at once.
import { existsSync } from 'node:fs';
import { isGrpcServiceError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from '../infra/logger';
import { cachedBundlePath } from '../infra/workflow-bundle';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
// @temporalio/proto is CommonJS: Node's ESM loader gives it as a default export only.
const { VersioningBehavior, WorkerVersioningMode } = proto.temporal.api.enums.v1;
const { PinnedOverrideBehavior } = proto.temporal.api.workflow.v1.VersioningOverride;

/** dev's build id for a workflow bundle key, and back. */
export const devBuildId = (bundleKey: string): string => `wf-${bundleKey}`;
const bundleKeyOf = (buildId: string): string | undefined => (/^wf-[0-9a-f]+$/.test(buildId) ? buildId.slice(3) : undefined);

const IDENTITY = 'deep-research (earlier builds)';
/** What runningBuilds() says for workers that poll without a version. */
const UNVERSIONED = '';
/** How often open runs are looked at again (an earlier build drained, a run that came back). */
const SWEEP_EVERY_MS = 30_000;
/** How long a start waits for the server to know its version (its workers poll first). */
const CURRENT_TRIES = 120;
/** Open runs described at a time by a sweep. */
const DESCRIBES_AT_ONCE = 16;

/** Workers of one build, as dev runs them. */
export interface Served {
  run(): Promise<void>;
  shutdown(): void;
}

export interface EarlierBuildsDeps {
  client: Client;
  namespace: string;
  deploymentName: string;
  /** The workflow task queue, whose pollers say which builds still have workers. */
  taskQueue: string;
  /** An earlier build counts as running while its workers polled within this long; unset (dev):
   *  no earlier build runs. */
  liveWithinMs?: number;
  /** This start's build, and its bundle. */
  buildId: string;
  bundle: WorkflowBundleOption;
  /** Workers of an earlier build, its workflow code from `bundle` (dev). */
  serve?: (buildId: string, bundle: WorkflowBundleOption) => Promise<Served>;
  /** A line in a research run's timeline. */
  note(researchId: string, key: string, data: { build: string; from: string | null; resetToEvent: number; note: string }): Promise<void>;
  log: Logger;
}

/** An open run as dev sees it: the build its next task goes to. */
interface OpenRun {
  workflowId: string;
  runId: string;
  type: string;
  /** The build it is pinned to (by its worker or an override); undefined: unversioned or auto-upgrade. */
  pinnedTo: string | undefined;
  /** The build its last task completed on. */
  build: string | undefined;
}

export class EarlierBuilds {
  private readonly served = new Map<string, { workers: Served; running: Promise<void> }>();
  /** Runs that go on on this build (pinned here, their last task completed here, or their history
   *  replays here): not described again while they stay open. */
  private readonly here = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly d: EarlierBuildsDeps) {}

  /** Makes this build current, deals with the runs open now, and looks again every half minute. */
  async start(): Promise<void> {
    await this.makeCurrent();
    await this.sweep();
    this.timer = setInterval(() => {
      this.sweeping = this.sweep().catch((err: unknown) => this.d.log.warn('looking at runs of earlier builds failed', { err }));
    }, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
    await Promise.all([...this.served.keys()].map((b) => this.retire(b)));
  }

  private async makeCurrent(): Promise<void> {
    const { client, namespace, deploymentName, buildId } = this.d;
    for (let attempt = 1; ; attempt++) {
      try {
        await client.workflowService.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName,
          buildId,
          identity: IDENTITY,
          ignoreMissingTaskQueues: true,
        });
        return;
      } catch (err) {
        // NOT_FOUND until the server has seen this version's workers poll.
        if (!(isGrpcServiceError(err) && err.code === 5) || attempt >= CURRENT_TRIES) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** Every open run whose next task would not reach this build: served, moved or reset. */
  async sweep(): Promise<void> {
    const open = await this.openRuns();
    const running = await this.runningBuilds();
    const stillPinned = new Set<string>();
    for (const run of open) {
      try {
        await this.takeOver(run, running, stillPinned);
      } catch (err) {
        // One run that cannot be moved now is looked at again at the next sweep; the others go on.
        this.d.log.warn('could not move a run of an earlier build; trying again shortly', { workflowId: run.workflowId, err });
        if (run.pinnedTo) stillPinned.add(run.pinnedTo);
      }
    }
    for (const build of this.served.keys()) {
      if (stillPinned.has(build)) continue;
      this.d.log.info('an earlier build has no open run left; its workers stop', { build });
      await this.retire(build);
    }
  }

  /** One open run: left where it is, served by its build here, or moved to this build. */
  private async takeOver(run: OpenRun, running: Set<string>, stillPinned: Set<string>): Promise<void> {
    if (run.pinnedTo === this.d.buildId || (!run.pinnedTo && run.build === this.d.buildId)) {
      this.here.add(run.runId);
      return;
    }
    if (run.pinnedTo && running.has(run.pinnedTo)) return;
    if (run.pinnedTo && (await this.serveBuild(run.pinnedTo))) {
      stillPinned.add(run.pinnedTo);
      return;
    }
    // Unpinned runs go to this build by themselves: only their history is checked, once (and not
    // while unversioned workers still poll: they may be what runs them).
    if (!run.pinnedTo && running.has(UNVERSIONED)) return;
    await this.move(run);
  }

  /** Earlier builds whose workers (elsewhere) polled lately; UNVERSIONED for unversioned workers. */
  private async runningBuilds(): Promise<Set<string>> {
    const within = this.d.liveWithinMs;
    if (within === undefined) return new Set();
    const { pollers } = await this.d.client.workflowService.describeTaskQueue({
      namespace: this.d.namespace,
      taskQueue: { name: this.d.taskQueue },
      taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    const since = Date.now() - within;
    return new Set(
      (pollers ?? []).flatMap((p) => {
        if (Number(p.lastAccessTime?.seconds ?? 0) * 1000 < since) return [];
        const build = p.deploymentOptions?.buildId;
        if (!build || p.deploymentOptions?.workerVersioningMode !== WorkerVersioningMode.WORKER_VERSIONING_MODE_VERSIONED)
          return [UNVERSIONED];
        return build !== this.d.buildId && p.deploymentOptions?.deploymentName === this.d.deploymentName ? [build] : [];
      }),
    );
  }

  private async openRuns(): Promise<OpenRun[]> {
    const infos: WorkflowExecutionInfo[] = [];
    // This deployment's task queue only: a namespace may hold other applications' workflows.
    const query = `ExecutionStatus = 'Running' AND TaskQueue = '${this.d.taskQueue.replaceAll("'", "\\'")}'`;
    for await (const info of this.d.client.workflow.list({ query })) infos.push(info);
    // Runs already known to go on here are not described again; closed ones are forgotten.
    const open = new Set(infos.map((i) => i.runId));
    for (const runId of this.here) if (!open.has(runId)) this.here.delete(runId);
    const unknown = infos.filter((i) => !this.here.has(i.runId));
    const runs: (OpenRun | undefined)[] = [];
    // A few describes at a time: a worker with a thousand runs in flight is not sent thousands at once.
    for (let i = 0; i < unknown.length; i += DESCRIBES_AT_ONCE) {
      runs.push(...(await Promise.all(unknown.slice(i, i + DESCRIBES_AT_ONCE).map((info) => this.describe(info)))));
    }
    return runs.filter((r): r is OpenRun => r !== undefined);
  }

  /** One open run's versioning: the build it is pinned to, and the one its last task completed on. */
  private async describe(info: WorkflowExecutionInfo): Promise<OpenRun | undefined> {
    try {
      const v = (await this.d.client.workflow.getHandle(info.workflowId, info.runId).describe()).raw.workflowExecutionInfo?.versioningInfo;
      const override = v?.versioningOverride?.pinned?.version?.buildId ?? undefined;
      const pinned = v?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
      const build = v?.deploymentVersion?.buildId ?? undefined;
      return { workflowId: info.workflowId, runId: info.runId, type: info.type, pinnedTo: override ?? (pinned ? build : undefined), build };
    } catch (err) {
      // Closed between the list and the look.
      if (isGrpcServiceError(err) && err.code === 5) return undefined;
      throw err;
    }
  }

  /** Starts workers of an earlier build when its bundle is still cached; false when it is not. */
  private async serveBuild(build: string): Promise<boolean> {
    if (this.served.has(build)) return true;
    if (!this.d.serve) return false;
    const key = bundleKeyOf(build);
    const codePath = key ? cachedBundlePath(key) : undefined;
    if (!codePath || !existsSync(codePath)) return false;
    const workers = await this.d.serve(build, { codePath });
    const running = workers.run();
    running.catch((err: unknown) => this.d.log.error('the workers of an earlier build stopped', { build, err }));
    this.served.set(build, { workers, running });
    this.d.log.info('serving the runs still pinned to an earlier build of the workflow code until they close or move', { build });
    return true;
  }

  private async retire(build: string): Promise<void> {
    const s = this.served.get(build);
    if (!s) return;
    this.served.delete(build);
    s.workers.shutdown();
    await s.running.catch(() => undefined);
  }

  /** A run no build of its own will take: on to this build, from where its history replays. */
  private async move(run: OpenRun): Promise<void> {
    const handle = this.d.client.workflow.getHandle(run.workflowId, run.runId);
    const events = (await handle.fetchHistory()).events ?? [];
    // Every workflow task so far was this build's (none yet: a run whose first task is still to come,
    // or one that took its first task here since it was described): nothing to replay.
    const ranHere = events.every(
      (e) =>
        !e.workflowTaskCompletedEventAttributes || e.workflowTaskCompletedEventAttributes.deploymentVersion?.buildId === this.d.buildId,
    );
    if (!run.pinnedTo && ranHere) {
      this.here.add(run.runId);
      return;
    }
    const until = await this.replaysUntil(run.workflowId, events);
    const pin = this.pinHere();
    if (until === events.length) {
      // An unversioned or auto-upgrade run goes to the current build by itself.
      if (!run.pinnedTo) {
        this.here.add(run.runId);
        return;
      }
      await this.d.client.workflowService.updateWorkflowExecutionOptions({
        namespace: this.d.namespace,
        workflowExecution: { workflowId: run.workflowId, runId: run.runId },
        ...pin,
      });
      this.d.log.info('a run of earlier workflow code replays on this build and goes on here', {
        workflowId: run.workflowId,
        from: run.build,
      });
      return;
    }
    const resetEvent = lastTaskCompletedBefore(events, until);
    if (!resetEvent?.eventId) throw new Error(`run ${run.workflowId} does not replay on build ${this.d.buildId} even from its start`);
    const resetTo = Number(resetEvent.eventId);
    const after = lastDoneBefore(events, resetTo);
    await this.d.client.workflowService.resetWorkflowExecution({
      namespace: this.d.namespace,
      workflowExecution: { workflowId: run.workflowId, runId: run.runId },
      reason: `the workflow code changed (build ${this.d.buildId}) and the run's history does not replay past event ${until}`,
      workflowTaskFinishEventId: resetEvent.eventId,
      requestId: `${run.runId}:${this.d.buildId}`,
      identity: IDENTITY,
      postResetOperations: [{ updateWorkflowOptions: pin }],
    });
    const note =
      `The workflow code changed while this run was open, and the new code replays its history only up to event ${until}: ` +
      `it went back to event ${resetTo}${after ? ` (after ${after})` : ''} and goes on from there on build ${this.d.buildId}.`;
    this.d.log.warn(note, { workflowId: run.workflowId, from: run.build });
    const researchId = researchIdOf(run.workflowId);
    if (researchId)
      await this.d.note(researchId, `moved:${run.runId}:${this.d.buildId}`, {
        build: this.d.buildId,
        from: run.build ?? null,
        resetToEvent: resetTo,
        note: run.workflowId === researchId ? note : `Step ${run.workflowId.slice(researchId.length).replace(/^\/step\//, '')}: ${note}`,
      });
  }

  /** The versioning override that pins a run to this build. */
  private pinHere() {
    const { deploymentName, buildId } = this.d;
    return {
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: {
            behavior: PinnedOverrideBehavior.PINNED_OVERRIDE_BEHAVIOR_PINNED,
            version: { deploymentName, buildId },
          },
        },
      },
      updateMask: { paths: ['versioning_override'] },
    };
  }

  /** How many of the history's events this build's code replays: all of them, or the prefix up to
   *  the workflow task where it first does something else (replays of ever shorter prefixes). */
  private async replaysUntil(workflowId: string, events: HistoryEvent[]): Promise<number> {
    const replays = async (n: number) => {
      try {
        await Worker.runReplayHistory({ workflowBundle: this.d.bundle }, { events: events.slice(0, n) }, workflowId);
        return true;
      } catch (err) {
        if ((err as Error).name === 'DeterminismViolationError') return false;
        throw err;
      }
    };
    if (await replays(events.length)) return events.length;
    // Ends of workflow tasks, latest first: the prefix that ends at one's start is what a reset there keeps.
    const starts = events.flatMap((e, i) => (e.workflowTaskStartedEventAttributes ? [i + 1] : [])).reverse();
    for (const n of starts) if (n < events.length && (await replays(n))) return n;
    return 0;
  }
}

/** The last WorkflowTaskCompleted event within the first `n` events + 1 (the completion of the task
 *  whose start ends the prefix: a reset there runs that task again), or undefined. */
function lastTaskCompletedBefore(events: HistoryEvent[], n: number): HistoryEvent | undefined {
  for (let i = Math.min(n, events.length - 1); i >= 0; i--) {
    const e = events[i]!;
    if (e.workflowTaskCompletedEventAttributes) return e;
  }
  return undefined;
}

/** The last activity or child workflow that finished before an event, in words. */
function lastDoneBefore(events: HistoryEvent[], eventId: number): string | undefined {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (Number(e.eventId) >= eventId) continue;
    const activity = e.activityTaskCompletedEventAttributes;
    if (activity) {
      const scheduled = byId.get(Number(activity.scheduledEventId))?.activityTaskScheduledEventAttributes;
      return `activity ${scheduled?.activityType?.name ?? '?'}`;
    }
    const child = e.childWorkflowExecutionCompletedEventAttributes;
    if (child) return `child workflow ${child.workflowExecution?.workflowId ?? '?'}`;
  }
  return undefined;
}

/** The research run a workflow belongs to: itself, or the run whose step it is. */
function researchIdOf(workflowId: string): string | undefined {
  const m = /^(research-[^/]+)(?:\/step\/.*)?$/.exec(workflowId);
  return m?.[1];
}
