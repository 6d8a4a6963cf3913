// A worker with TEMPORAL_WORKER_PROMOTE (docker-compose.yml's workers): build A is current and a run
// waits for its review on it; A's workers stop for good (a compose rollout replaces them); B
// starts, makes itself current and, once A's workers have not polled for a while, takes the run
// over (its history replays on B: pinned to B as it is). Approved, the run completes on B.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/infra/logger';
import { EarlierBuilds } from '../../src/cli/earlier-builds';
import { createWorker, type WorkerGroup } from '../../src/worker';
import { runAwaitingReview } from '../support/awaiting-review';
import { startHarness, type Harness } from '../support/harness';
import { researchRules } from '../support/research-script';
import { missingReason, temporalAddress, workflowBundle } from '../support/services';

const ready = Boolean(temporalAddress());

describe.skipIf(!ready)(
  `a promoting worker takes over runs of a build whose workers are gone (${ready ? 'live' : missingReason()})`,
  () => {
    const deployment = `test-${randomUUID().slice(0, 8)}`;
    let h: Harness;
    let native: NativeConnection;
    let b: WorkerGroup | undefined;
    let bRunning: Promise<void> | undefined;
    const handovers: EarlierBuilds[] = [];

    beforeAll(async () => {
      h = await startHarness({ env: { TEMPORAL_DEPLOYMENT_NAME: deployment, TEMPORAL_WORKER_BUILD_ID: 'a' } });
      native = await NativeConnection.connect({ address: temporalAddress()! });
    });
    afterAll(async () => {
      await Promise.all(handovers.map((x) => x.stop()));
      b?.shutdown();
      await bRunning;
      await h?.close();
      await native?.close();
    });

    const handover = (buildId: string) => {
      const x = new EarlierBuilds({
        client: h.client,
        namespace: h.config.temporal.namespace,
        deploymentName: deployment,
        taskQueue: h.taskQueue,
        // Test-sized: A counts as gone a second after its last poll.
        liveWithinMs: 1_000,
        buildId,
        bundle: workflowBundle(),
        note: async () => {
          throw new Error('no run should need a reset here');
        },
        log: createLogger('warn'),
      });
      handovers.push(x);
      return x;
    };
    const buildOf = async (id: string) =>
      (await h.client.workflow.getHandle(id).describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;

    it('makes B current and moves the run A left waiting for its review; it completes on B', async () => {
      h.llm.script(researchRules());
      await handover('a').start();
      const { id, handle } = await runAwaitingReview(h);
      expect(await buildOf(id)).toBe('a');

      // A's workers stop for good; B starts and promotes itself.
      h.worker.shutdown();
      b = await createWorker({
        config: { ...h.config, temporal: { ...h.config.temporal, deployment: { name: deployment, buildId: 'b' } } },
        connection: native,
        pool: h.pool,
        taskQueue: h.taskQueue,
        workflowBundle: workflowBundle(),
      });
      bRunning = b.run();
      // Past A's last poll by more than the second it counts as running for.
      await new Promise((r) => setTimeout(r, 2_000));
      const builds = handover('b');
      await builds.start();
      const routing = await h.client.workflowService.describeWorkerDeployment({
        namespace: h.config.temporal.namespace,
        deploymentName: deployment,
      });
      expect(routing.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId).toBe('b');
      const pinned = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo?.versioningOverride?.pinned?.version?.buildId;
      expect(pinned).toBe('b');

      await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
      const result = (await handle.result()) as { status: string };
      expect(result.status).toBe('completed');
      expect(await buildOf(id)).toBe('b');
    }, 120_000);

    it('neither replays a run whose first task is still to come nor describes it again', async () => {
      // A queue no worker polls: the run's first workflow task never completes.
      const queue = `untaken-${randomUUID()}`;
      const id = `untaken-${randomUUID()}`;
      const handle = await h.client.workflow.start('researchWorkflow', { taskQueue: queue, workflowId: id, args: [] });
      const query = `ExecutionStatus = 'Running' AND TaskQueue = '${queue}'`;
      for (let i = 0; i < 100; i++) {
        const listed = [];
        for await (const info of h.client.workflow.list({ query })) listed.push(info);
        if (listed.length) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const replays = vi.spyOn(Worker, 'runReplayHistory');
      const handles = vi.spyOn(h.client.workflow, 'getHandle');
      try {
        const builds = new EarlierBuilds({
          client: h.client,
          namespace: h.config.temporal.namespace,
          deploymentName: deployment,
          taskQueue: queue,
          liveWithinMs: 1_000,
          buildId: 'c',
          bundle: workflowBundle(),
          note: async () => {
            throw new Error('no run should need a reset here');
          },
          log: createLogger('warn'),
        });
        await builds.sweep();
        const looks = () => handles.mock.calls.filter(([wid]) => wid === id).length;
        // Described, and its history read: no completed task, so nothing to replay.
        expect(looks()).toBe(2);
        expect(replays).not.toHaveBeenCalled();
        await builds.sweep();
        expect(looks()).toBe(2);
      } finally {
        replays.mockRestore();
        handles.mockRestore();
        await handle.terminate();
      }
    }, 60_000);
  },
);
