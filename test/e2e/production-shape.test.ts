// The production shape on the real Temporal server (go.temporal.io/server on PostgreSQL with SQL
// visibility, scripts/temporal-server.ts), with the processes a user starts: `deep-research
// worker` twice and `deep-research api` with a key, each as its own process.
//
// 1. A run submitted with the key completes while one worker is SIGKILLed in the middle of a step
//    and then the Temporal server itself is SIGKILLed and started again; no LLM request that had
//    finished is made twice.
// 2. A rolling deploy with Worker Versioning: runs in flight on build A (one waiting for review,
//    one researching), build B starts and is made current, A drains and stops. The review run
//    (AUTO_UPGRADE) moves to B; the researching step (PINNED) finishes on A; new runs start on B.
import { randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTemporalServer, type RunningTemporalServer } from '../../scripts/temporal-server';
import type { ResearchResult } from '../../src/shared/schemas';
import { SEARCH_ATTRIBUTES } from '../../src/shared/constants';
import { FixtureSite } from '../support/fixture-site';
import { ScriptedLlmServer, type LoggedRequest } from '../support/llm-server';
import { defaultReact, planJson, researchRules, searchResults, stepTitleOf, userText } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { databaseUrl, missingReason } from '../support/services';
import { adminUrl, realServerMissing } from '../support/temporal-cluster';
import { freePort, spawnCli, type Spawned } from '../support/spawn';

const ready = !realServerMissing() && Boolean(databaseUrl() && inject('temporalCliPath'));

const KEY = `dr-prod-${randomBytes(12).toString('hex')}`;
const DEPLOYMENT = 'deep-research';
/** Time a finished answer may still need to reach the call log when a worker is killed. */
const RECORD_WINDOW_MS = 500;
const signature = (r: LoggedRequest) => JSON.stringify([r.rule, r.body.messages]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000): Promise<T> {
  for (const end = Date.now() + timeoutMs; ; await sleep(100)) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

describe.skipIf(!ready)(
  `production shape on the real Temporal server (${ready ? 'live' : (realServerMissing() ?? missingReason())})`,
  () => {
    let server: RunningTemporalServer;
    let connection: Connection;
    let client: Client;
    const llm = new ScriptedLlmServer();
    const site = new FixtureSite();
    let search: FakeSearxng;
    const procs: Spawned[] = [];
    const taskQueue = `prod-${randomUUID()}`;
    let apiUrl = '';

    const common = () => ({
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      DATABASE_URL: databaseUrl()!,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-production-shape',
      SEARCH_PROVIDERS: 'searxng',
      SEARXNG_URL: search.url,
      CRAWL_ALLOW_HOSTS: new URL(site.url).host,
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      LLM_TIMEOUT_MS: '30000',
      // Runs submitted through the API take these: a dead worker's call moves on after 3 s.
      RETRY_INITIAL_INTERVAL: '200ms',
      RETRY_MAX_INTERVAL: '1s',
      LLM_HEARTBEAT_TIMEOUT: '3s',
      // A run waiting for review looks for a newer build every second (5 minutes by default).
      NEW_BUILD_CHECK: '1s',
      // One run of a tenant researches at a time: the others wait in its admission queue.
      TENANT_MAX_RUNS: '1',
    });
    const startWorker = (buildId: string) => {
      const w = spawnCli(['worker'], { ...common(), TEMPORAL_WORKER_BUILD_ID: buildId, WORKER_SHUTDOWN_GRACE_MS: '2000' });
      procs.push(w);
      return w;
    };
    const temporalCli = (...args: string[]) =>
      execFileSync(inject('temporalCliPath')!, [...args, '--address', server.address, '--namespace', server.namespace], {
        encoding: 'utf8',
      });
    /** What docs/scaling-and-deploys.md says to run: the version's workers have polled, so the server knows it. */
    const makeCurrent = (buildId: string) =>
      until(`build ${buildId} current`, () => {
        try {
          return temporalCli(
            'worker',
            'deployment',
            'set-current-version',
            '--deployment-name',
            DEPLOYMENT,
            '--build-id',
            buildId,
            '--yes',
          );
        } catch {
          return undefined;
        }
      });
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const submit = async (question: string, options: Record<string, unknown>) =>
      (await api('POST', '/v1/research', { question, options })).id as string;
    /** The build id of every completed workflow task of a workflow's run (absent: its latest), in order. */
    const buildIds = async (workflowId: string, runId?: string) =>
      ((await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []).flatMap((e) => {
        const a = e.workflowTaskCompletedEventAttributes;
        return a ? [a.deploymentVersion?.buildId ?? a.workerVersion?.buildId ?? 'unversioned'] : [];
      });

    beforeAll(async () => {
      await Promise.all([llm.start(), site.start()]);
      search = await new FakeSearxng({}, searchResults(site.url)).start();
      server = await startTemporalServer({
        adminUrl: adminUrl(),
        searchAttributes: SEARCH_ATTRIBUTES,
        // A drained version is reported within seconds here (3 minutes each by default).
        dynamicConfig: {
          'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '3s',
          'matching.wv.VersionDrainageStatusRefreshInterval': '2s',
        },
      });
      connection = await Connection.connect({ address: server.address });
      client = new Client({ connection, namespace: server.namespace });
      const port = await freePort();
      const apiProc = spawnCli(['api'], { ...common(), API_HOST: '127.0.0.1', API_PORT: String(port), API_KEYS: `${KEY}=acme` });
      procs.push(apiProc);
      // Generous: the real server, the suite and two other passes share two cores while it starts.
      apiUrl = (await apiProc.waitFor(/API listening on (http:\/\/\S+)/, 180_000))[1]!;
    }, 300_000);

    afterAll(async () => {
      for (const p of procs) p.child.kill('SIGKILL');
      await connection?.close();
      await server?.stop();
      await Promise.all([llm.close(), site.close(), search?.close()]);
    }, 60_000);

    it('completes a run on two workers through a worker SIGKILL and a Temporal server SIGKILL, paying for nothing twice', async () => {
      // Each step's first turn is answered only once the server is back, its second (the retry
      // after the kill) takes 2 s: the worker holding step a dies with the first in flight, and the
      // server dies while the other worker's retry is in flight and stays down until after that
      // answer has come back.
      let releaseFirstTurns!: () => void;
      const firstTurnsHeld = new Promise<void>((resolve) => (releaseFirstTurns = resolve));
      const slow = new Map<string, { until?: Promise<void>; delayMs?: number }[]>([
        ['Step a', [{ until: firstTurnsHeld }, { delayMs: 2_000 }]],
        ['Step b', [{ until: firstTurnsHeld }, { delayMs: 2_000 }]],
      ]);
      llm.script(
        researchRules(
          {
            react: (req) => ({ ...defaultReact(req), ...slow.get(stepTitleOf(req))?.shift() }),
          },
          planJson([{ id: 'a' }, { id: 'b' }, { id: 'c', dependsOn: ['a', 'b'] }]),
        ),
      );
      const workers = [startWorker('A'), startWorker('A')];
      await Promise.all(workers.map((w) => w.waitFor(/worker ready/, 90_000)));
      await makeCurrent('A');
      const id = await submit('How much cheaper has solar power become?', { autoAcceptPlan: true });

      // The worker whose LLM worker holds step a's first turn (held at the model): its identity is pid@host.
      await until('step a at the model', () => llm.requests.some((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step a'));
      const holder = await until('step a in flight', async () => {
        const d = await client.workflow
          .getHandle(`${id}/step/a`)
          .describe()
          .catch(() => undefined);
        const identity = d?.raw.pendingActivities?.find((a) => a.lastWorkerIdentity)?.lastWorkerIdentity;
        return identity ? workers.find((w) => identity.startsWith(`${w.child.pid}@`)) : undefined;
      });
      holder.child.kill('SIGKILL');
      await holder.exited(10_000);
      const workerKilledAt = Date.now();

      // Its calls in flight are cut; the survivor makes the same request again (after the 3 s
      // heartbeat timeout). Only that retry: another step's first turn, held, may start meanwhile.
      const cut = await until("the killed worker's call cut", () => {
        const aborted = llm.requests.filter((r) => r.rule === 'react' && r.aborted).map(signature);
        return aborted.length ? aborted : undefined;
      });
      await until('the call retried by the other worker', () =>
        llm.requests.some(
          (r) => r.rule === 'react' && r.startedAt > workerKilledAt && r.endedAt === undefined && cut.includes(signature(r)),
        ),
      );
      await server.kill('SIGKILL');
      const serverKilledAt = Date.now();
      // A model call in flight ends while the server is down (under load it may take a while).
      await until(
        'a call to end while the server is down',
        () => llm.completed().some((r) => r.rule === 'react' && r.endedAt! > serverKilledAt),
        30_000,
      );
      await server.start();
      releaseFirstTurns();

      const result = await until(
        'the run to finish',
        async () => {
          const s = await api('GET', `/v1/research/${id}`).catch(() => undefined);
          return s && ['completed', 'failed', 'cancelled'].includes(String(s.status)) ? s : undefined;
        },
        150_000,
      );
      expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
      const final = (await client.workflow.getHandle(id).result()) as ResearchResult;
      expect(final.steps?.map((s) => [s.id, s.status])).toEqual([
        ['a', 'completed'],
        ['b', 'completed'],
        ['c', 'completed'],
      ]);
      // No request that had finished (and been recorded) before a kill was made again.
      const firstEnd = new Map<string, number>();
      const times = new Map<string, number>();
      for (const r of llm.completed()) {
        const k = signature(r);
        times.set(k, (times.get(k) ?? 0) + 1);
        if (!firstEnd.has(k)) firstEnd.set(k, r.endedAt!);
      }
      const repeated = [...times].filter(([k, n]) => n > 1 && Math.abs(firstEnd.get(k)! - workerKilledAt) > RECORD_WINDOW_MS);
      expect(repeated.map(([k]) => JSON.parse(k)[0])).toEqual([]);
      // Every workflow task of the run ran on build A (both workers are A).
      expect(new Set(await buildIds(id))).toEqual(new Set(['A']));
    }, 300_000);

    it('rolls out build B while runs are in flight on A: runs at a long wait move to B, the others finish where they are', async () => {
      // Step slow's model calls wait until B is current, the reviewed run approved and a new run
      // submitted: the researching run's step is in flight on A through all of that, holding the
      // tenant's one slot.
      let releaseSlow!: () => void;
      const slowHeld = new Promise<void>((resolve) => (releaseSlow = resolve));
      // The coordinator asks the question about "my region" which region is meant, once.
      const coordinator = (req: LoggedRequest['body']) => ({
        json: {
          action: 'research',
          locale: 'en-US',
          directAnswer: null,
          researchTopic: 'Power prices',
          clarificationQuestion: /my region/.test(userText(req)) && !/Q: Which region/.test(userText(req)) ? 'Which region?' : null,
        },
      });
      llm.script(
        researchRules(
          {
            coordinator,
            react: (req) => ({ ...defaultReact(req), ...(stepTitleOf(req) === 'Step slow' ? { until: slowHeld } : {}) }),
          },
          planJson([{ id: 'slow' }]),
        ),
      );
      // B's workers start now, beside A's runs (they poll, but nothing is routed to B until it is
      // made current below).
      const b = [startWorker('B'), startWorker('B')];
      const a = procs.filter((p) => p.child.exitCode === null && /as deployment deep-research, build A/.test(p.output()));
      if (a.length === 0) a.push(startWorker('A'));
      await Promise.all(a.map((w) => w.waitFor(/worker ready/, 90_000)));
      await makeCurrent('A');

      // On A: one run waiting for review, one whose step is researching.
      const reviewed = await submit('Which grid batteries last longest?', {});
      await until('the plan under review', async () => (await api('GET', `/v1/research/${reviewed}`)).phase === 'reviewing');
      const researching = await submit('How fast is offshore wind growing?', { autoAcceptPlan: true });
      await until('the slow step researching', () =>
        llm.requests.some((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step slow' && r.endedAt === undefined),
      );
      // One run waiting for the user's answer to a clarifying question, one queued for the slot.
      const clarifying = await submit('What does power cost in my region?', { autoAcceptPlan: true, maxClarifications: 1 });
      const queued = await submit('Which heat pumps work in the cold?', { autoAcceptPlan: true });
      await until(
        'the clarifying question asked',
        async () => (await api('GET', `/v1/research/${clarifying}`)).clarificationQuestion === 'Which region?',
      );
      await until('a run queued for the slot', async () => (await api('GET', `/v1/research/${queued}`)).phase === 'queued');
      const firstRuns = new Map<string, string>();
      for (const id of [reviewed, clarifying, queued]) firstRuns.set(id, (await client.workflow.getHandle(id).describe()).runId);

      // Build B is made current and takes new runs; A keeps what is pinned to it.
      await Promise.all(b.map((w) => w.waitFor(/worker ready/, 90_000)));
      await makeCurrent('B');
      await until('build B current', async () => {
        const d = await client.workflowService.describeWorkerDeployment({ namespace: server.namespace, deploymentName: DEPLOYMENT });
        return d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId === 'B';
      });
      // The change reaches the task queues asynchronously: the approval's workflow task goes to B
      // once the runs' task queue routes there. (The deployment's routingConfigUpdateState is often
      // still IN_PROGRESS by then, and once, under load, stayed so for over a minute.)
      await until("the runs' task queue routed to B", async () => {
        const q = await client.workflowService.describeTaskQueue({
          namespace: server.namespace,
          taskQueue: { name: taskQueue },
          taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
        });
        return q.versioningInfo?.currentDeploymentVersion?.buildId === 'B';
      });
      // The run waiting for review moves to B by itself (continued as new there), still at review
      // of the same plan; the approval reaches it on B.
      for (const id of [reviewed, clarifying, queued])
        await until(`${id} continued on B`, async () => {
          const d = await client.workflow.getHandle(id).describe();
          return d.runId !== firstRuns.get(id) && (await buildIds(id)).includes('B');
        });
      // Each is where it was, as its status says.
      expect(await api('GET', `/v1/research/${reviewed}`)).toMatchObject({
        status: 'awaiting_review',
        phase: 'reviewing',
        plan: { version: 1 },
      });
      expect(await api('GET', `/v1/research/${clarifying}`)).toMatchObject({
        status: 'awaiting_review',
        clarificationQuestion: 'Which region?',
      });
      expect(await api('GET', `/v1/research/${queued}`)).toMatchObject({ phase: 'queued', plan: { version: 1 } });
      await api('POST', `/v1/research/${reviewed}/plan/approve`, { planVersion: 1 });
      await api('POST', `/v1/research/${clarifying}/clarification`, { answer: 'Bavaria' });
      const fresh = await submit('What limits green hydrogen?', { autoAcceptPlan: true });
      releaseSlow();

      // A drains once its pinned run has finished; then its workers stop.
      await until(
        'build A drained',
        async () => {
          const v = await client.workflowService.describeWorkerDeploymentVersion({
            namespace: server.namespace,
            deploymentVersion: { deploymentName: DEPLOYMENT, buildId: 'A' },
          });
          // VERSION_DRAINAGE_STATUS_DRAINED = 2
          return v.workerDeploymentVersionInfo?.drainageInfo?.status === 2;
        },
        120_000,
      );
      for (const w of a) w.child.kill('SIGTERM');
      await Promise.all(a.map((w) => w.exited(30_000)));

      for (const id of [reviewed, researching, fresh, clarifying, queued]) {
        const r = await until(
          `${id} finished`,
          async () => {
            const s = await api('GET', `/v1/research/${id}`);
            return ['completed', 'failed', 'cancelled'].includes(String(s.status)) ? s : undefined;
          },
          120_000,
        );
        expect(r, id).toMatchObject({ status: 'completed', outcome: 'report' });
      }
      // The runs at a long wait (PINNED) waited on A until B was the target, then continued as new
      // on B, where they ran to their end, their steps on B. They were on B while A's workers still
      // polled: the new run's first task upgraded.
      for (const id of [reviewed, clarifying, queued]) {
        expect(new Set(await buildIds(id, firstRuns.get(id))), id).toEqual(new Set(['A']));
        const movedFrom = (await client.workflow.getHandle(id, firstRuns.get(id)).fetchHistory()).events!.at(-1)!;
        expect(movedFrom.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId, id).toBeTruthy();
        expect(new Set(await buildIds(id)), id).toEqual(new Set(['B']));
        expect(new Set(await buildIds(`${id}/step/slow`)), id).toEqual(new Set(['B']));
      }
      // The answer reached the coordinator's next round on B.
      const rounds = llm.requests.filter((r) => r.rule === 'coordinator' && /my region/.test(userText(r.body)));
      expect(rounds.map((r) => /A: Bavaria/.test(userText(r.body)))).toEqual([false, true]);
      // Nothing a moved run had asked the model before it moved was asked again: each request that
      // names its question (coordinator, background, plan), once.
      for (const [id, question] of [
        [reviewed, 'Which grid batteries last longest?'],
        [clarifying, 'What does power cost in my region?'],
        [queued, 'Which heat pumps work in the cold?'],
      ]) {
        const asked = llm.requests.filter((r) => userText(r.body).includes(question!)).map(signature);
        expect(asked.length, id).toBeGreaterThanOrEqual(2);
        expect(asked.length - new Set(asked).size, id).toBe(0);
      }
      // The researching run and its step (PINNED, no long wait left) ran on A from start to end.
      expect(new Set(await buildIds(`${researching}/step/slow`))).toEqual(new Set(['A']));
      expect(new Set(await buildIds(researching))).toEqual(new Set(['A']));
      // A new run is on B throughout.
      expect(new Set([...(await buildIds(fresh)), ...(await buildIds(`${fresh}/step/slow`))])).toEqual(new Set(['B']));
    }, 400_000);
  },
);
