// Network faults, not process stops: a `deep-research worker` reaches Temporal, PostgreSQL and the
// model provider through Toxiproxy (scripts/toxiproxy.ts), and mid-run one of them is black-holed
// (connections stay open, every byte is dropped, nothing closes them) for longer than the
// keepalives, heartbeats and timeouts that matter, then restored; and all three are cut (RST) at
// once. Each run completes with every step, and no model call is paid twice except the ones whose
// answer the network lost: those are asked once more (at-most-twice, never more).
//
// Each test has a worker, a model double and proxies of its own, so a fault touches only its own
// run and the tests run side by side: the file takes about one black hole, not five faults one
// after another (the runs are scripted and mostly wait their faults out).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { ensureToxiproxy, installedToxiproxy } from '../../scripts/toxiproxy';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { repeatedCompleted, signature, untilAsked, workerProcesses } from '../support/faults';
import type { LoggedRequest, ScriptedLlmServer } from '../support/llm-server';
import { defaultReact, planJson, researchRules } from '../support/research-script';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import type { Spawned } from '../support/spawn';
import { Toxiproxy, type Fault } from '../support/toxiproxy';

const CI = process.env.CI === 'true';
const ready = Boolean(temporalAddress() && databaseUrl() && (CI || installedToxiproxy()));
/** Longer than the worker's gRPC keepalive (30 s + 15 s), its LLM heartbeat timeout (15 s) and
 *  LLM_TIMEOUT_MS below; the black holes are held side by side, so the file takes about one. */
const HOLE_MS = Number(process.env.NETWORK_FAULT_MS ?? 50_000);
const CUT_MS = 10_000;
const SERVICES = ['temporal', 'postgres', 'llm'] as const;
type Service = (typeof SERVICES)[number];

/** host:port of a URL (or of a bare address). */
const hostPort = (u: string) => (u.includes('://') ? new URL(u).host : u);
const withHost = (u: string, host: string) => Object.assign(new URL(u), { host }).toString();

/** Completed model calls asked more than once, with those the network lost (in flight while the
 *  fault held) set apart: a lost answer is asked again once; anything else repeated is paid twice.
 *  Each is named with its role, count and when it was first asked (seconds from the fault). */
function repeats(llm: ScriptedLlmServer, window: { from: number; to: number }) {
  const bySignature = new Map<string, LoggedRequest[]>();
  for (const r of llm.completed()) bySignature.set(signature(r), [...(bySignature.get(signature(r)) ?? []), r]);
  const repeated = [...bySignature.values()].filter((rs) => rs.length > 1);
  const lost = (r: LoggedRequest) => r.startedAt <= window.to && (r.endedAt ?? 0) >= window.from;
  const name = (rs: LoggedRequest[]) =>
    `${rs[0]!.rule} ×${rs.length} (first asked at ${((rs[0]!.startedAt - window.from) / 1000).toFixed(1)} s, again at ${rs
      .slice(1)
      .map((r) => ((r.startedAt - window.from) / 1000).toFixed(1))
      .join(', ')} s)`;
  return {
    explained: repeated.filter((rs) => rs.length === 2 && lost(rs[0]!)).map(name),
    unexplained: repeated.filter((rs) => rs.length > 2 || !lost(rs[0]!)).map(name),
  };
}

describe.skipIf(!ready)(`network faults (${ready ? 'live' : missingReason() || 'toxiproxy not built: scripts/toxiproxy.ts'})`, () => {
  let proxy: Toxiproxy;

  /** A worker process on a task queue of its own, with its model double, reaching Temporal,
   *  PostgreSQL and that double through proxies of its own (named `<name>-<service>`). */
  function stack(name: string) {
    const env: Record<string, string> = { LLM_TIMEOUT_MS: '15000' };
    const f = workerProcesses(`network-faults-${name}`, env);
    const s = {
      f,
      worker: undefined as unknown as Spawned,
      proxyOf: (service: Service) => `${name}-${service}`,
      async start() {
        const via = (service: Service, upstream: string) => proxy.proxy(s.proxyOf(service), hostPort(upstream));
        Object.assign(env, {
          TEMPORAL_ADDRESS: await via('temporal', temporalAddress()!),
          DATABASE_URL: withHost(databaseUrl()!, await via('postgres', databaseUrl()!)),
          OPENAI_BASE_URL: withHost(f.llm.url, await via('llm', f.llm.url)),
        });
        s.worker = f.startWorker();
        await s.worker.waitFor(/worker ready/, 120_000);
      },
    };
    return s;
  }
  type Stack = ReturnType<typeof stack>;
  const stacks = {
    temporal: stack('temporal'),
    postgres: stack('postgres'),
    llm: stack('llm'),
    cut: stack('cut'),
    latency: stack('latency'),
  };

  beforeAll(async () => {
    proxy = await Toxiproxy.start(await ensureToxiproxy());
    await Promise.all(Object.values(stacks).map((s) => s.start()));
  }, 180_000);
  afterAll(async () => proxy?.close());

  /** A two-step run, both steps' first researcher turns slow enough to be in flight at the fault. */
  async function runWithFault(s: Stack, services: readonly Service[], fault: Fault, holdMs: number) {
    let slow = 0;
    s.f.llm.script(
      researchRules(
        { react: (req, n) => ({ ...(defaultReact(req) as object), ...(slow++ < 2 && n < 2 ? { delayMs: 1_500 } : {}) }) as never },
        planJson([{ id: 'a' }, { id: 'b' }]),
      ),
    );
    const handle = await s.f.client.workflow.start('researchWorkflow', {
      taskQueue: s.f.taskQueue,
      workflowId: `research-netfault-${randomUUID()}`,
      args: [
        {
          question: 'Does a run survive a network partition?',
          tenant: 'default',
          options: ResearchOptions.parse({ autoAcceptPlan: true }),
          retry: { initialInterval: '200ms', maximumInterval: '2s' },
        },
      ],
    });
    await untilAsked(s.f.llm, 'react', 60_000);
    const from = Date.now();
    await Promise.all(services.map((service) => proxy.fault(s.proxyOf(service), fault)));
    await new Promise((r) => setTimeout(r, holdMs));
    // The fault held the run up: it had not ended when the fault was lifted.
    const during = (await handle.describe()).status.name;
    await Promise.all(services.map((service) => proxy.restore(s.proxyOf(service))));
    const to = Date.now();
    const result = (await Promise.race([
      handle.result(),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`the run did not complete 120 s after the fault was lifted:\n${s.worker.output().slice(-4000)}`)),
          120_000,
        ),
      ),
    ])) as ResearchResult;
    return { result, during, window: { from, to }, recoveredMs: Date.now() - to };
  }

  function expectComplete(expect: ExpectStatic, { result, during }: { result: ResearchResult; during: string }) {
    expect(during).toBe('RUNNING');
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
  }

  it.concurrent.for(['temporal', 'postgres'] as const)(
    'a worker cut off from %s by a black hole completes the run once it is back, paying for nothing twice',
    { timeout: HOLE_MS + 240_000 },
    async (service, { expect }) => {
      const s = stacks[service];
      const run = await runWithFault(s, [service], 'blackHole', HOLE_MS);
      console.log(
        `${service} black hole of ${HOLE_MS / 1000} s: the run completed ${(run.recoveredMs / 1000).toFixed(1)} s after it was lifted`,
      );
      expectComplete(expect, run);
      // The model's answers reached the worker: a retried activity finds its answer stored, never asks again.
      expect(repeats(s.f.llm, run.window)).toEqual({ explained: [], unexplained: [] });
      expect(s.worker.child.exitCode).toBeNull();
    },
  );

  it.concurrent(
    'a black-holed model provider costs time, and only the answers the network lost are asked again',
    async ({ expect }) => {
      const s = stacks.llm;
      const run = await runWithFault(s, ['llm'], 'blackHole', HOLE_MS);
      const { result, window } = run;
      console.log(`llm black hole of ${HOLE_MS / 1000} s: the run completed ${(run.recoveredMs / 1000).toFixed(1)} s after it was lifted`);
      expectComplete(expect, run);
      // Nothing reached the model while the hole held (bytes dropped): only calls sent before it.
      expect(s.f.llm.requests.filter((r) => r.startedAt > window.from + 500 && r.startedAt < window.to)).toEqual([]);
      // No fallback was taken for a provider that was only unreachable.
      expect(result.notes.join('\n')).not.toMatch(/too slow|fall ?back/i);
      const { explained, unexplained } = repeats(s.f.llm, window);
      expect(unexplained).toEqual([]);
      // The researcher turns in flight when the hole opened were answered into it, and asked again.
      expect(explained.length).toBeGreaterThanOrEqual(1);
      for (const e of explained) expect(e).toMatch(/^react ×2 /);
    },
    HOLE_MS + 240_000,
  );

  it.concurrent(
    'a worker whose connections to all three are reset (RST) for a while completes the run',
    async ({ expect }) => {
      const s = stacks.cut;
      const run = await runWithFault(s, SERVICES, 'cut', CUT_MS);
      expectComplete(expect, run);
      expect(repeats(s.f.llm, run.window).unexplained).toEqual([]);
      expect(s.worker.child.exitCode).toBeNull();
    },
    CUT_MS + 240_000,
  );

  it.concurrent(
    'a slow network (100 ms each way on all three) only costs time',
    async ({ expect }) => {
      const s = stacks.latency;
      await Promise.all(SERVICES.map((service) => proxy.fault(s.proxyOf(service), 'latency', 100)));
      try {
        const run = await runWithFault(s, [], 'latency', 0);
        expect(run.result).toMatchObject({ status: 'completed', outcome: 'report' });
        expect(run.result.steps?.map((step) => step.status)).toEqual(['completed', 'completed']);
        expect(repeatedCompleted(s.f.llm)).toBe(0);
      } finally {
        await Promise.all(SERVICES.map((service) => proxy.restore(s.proxyOf(service))));
      }
    },
    240_000,
  );
});
