// Network faults, not process stops: a `deep-research worker` reaches Temporal, PostgreSQL and the
// model provider through Toxiproxy (scripts/toxiproxy.ts), and mid-run one of them is black-holed
// (connections stay open, every byte is dropped, nothing closes them) for longer than the
// keepalives, heartbeats and timeouts that matter, then restored; and all three are cut (RST) at
// once. Each run completes with every step, and no model call is paid twice except the ones whose
// answer the network lost: those are asked once more (at-most-twice, never more).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 *  LLM_TIMEOUT_MS below; short enough that the file takes a few minutes. */
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
  const addresses = {} as Record<Service, string>;
  const env: Record<string, string> = { LLM_TIMEOUT_MS: '15000' };
  const f = workerProcesses('network-faults', env);
  let worker: Spawned;

  beforeAll(async () => {
    proxy = await Toxiproxy.start(await ensureToxiproxy());
    addresses.temporal = await proxy.proxy('temporal', hostPort(temporalAddress()!));
    addresses.postgres = await proxy.proxy('postgres', hostPort(databaseUrl()!));
    addresses.llm = await proxy.proxy('llm', hostPort(f.llm.url));
    Object.assign(env, {
      TEMPORAL_ADDRESS: addresses.temporal,
      DATABASE_URL: withHost(databaseUrl()!, addresses.postgres),
      OPENAI_BASE_URL: withHost(f.llm.url, addresses.llm),
    });
    worker = f.startWorker();
    await worker.waitFor(/worker ready/, 60_000);
  }, 120_000);
  afterAll(async () => proxy?.close());

  /** A two-step run, both steps' first researcher turns slow enough to be in flight at the fault. */
  async function runWithFault(services: readonly Service[], fault: Fault, holdMs: number) {
    let slow = 0;
    f.llm.script(
      researchRules(
        { react: (req, n) => ({ ...(defaultReact(req) as object), ...(slow++ < 2 && n < 2 ? { delayMs: 1_500 } : {}) }) as never },
        planJson([{ id: 'a' }, { id: 'b' }]),
      ),
    );
    const handle = await f.client.workflow.start('researchWorkflow', {
      taskQueue: f.taskQueue,
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
    await untilAsked(f.llm, 'react', 60_000);
    const from = Date.now();
    for (const s of services) await proxy.fault(s, fault);
    await new Promise((r) => setTimeout(r, holdMs));
    // The fault held the run up: it had not ended when the fault was lifted.
    const during = (await handle.describe()).status.name;
    for (const s of services) await proxy.restore(s);
    const to = Date.now();
    const result = (await Promise.race([
      handle.result(),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`the run did not complete 120 s after the fault was lifted:\n${worker.output().slice(-4000)}`)),
          120_000,
        ),
      ),
    ])) as ResearchResult;
    return { result, during, window: { from, to }, recoveredMs: Date.now() - to };
  }

  function expectComplete({ result, during }: { result: ResearchResult; during: string }) {
    expect(during).toBe('RUNNING');
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
  }

  it.each(['temporal', 'postgres'] as const)(
    'a worker cut off from %s by a black hole completes the run once it is back, paying for nothing twice',
    async (service) => {
      const run = await runWithFault([service], 'blackHole', HOLE_MS);
      console.log(
        `${service} black hole of ${HOLE_MS / 1000} s: the run completed ${(run.recoveredMs / 1000).toFixed(1)} s after it was lifted`,
      );
      expectComplete(run);
      // The model's answers reached the worker: a retried activity finds its answer stored, never asks again.
      expect(repeats(f.llm, run.window)).toEqual({ explained: [], unexplained: [] });
      expect(worker.child.exitCode).toBeNull();
    },
    HOLE_MS + 240_000,
  );

  it(
    'a black-holed model provider costs time, and only the answers the network lost are asked again',
    async () => {
      const run = await runWithFault(['llm'], 'blackHole', HOLE_MS);
      const { result, window } = run;
      console.log(`llm black hole of ${HOLE_MS / 1000} s: the run completed ${(run.recoveredMs / 1000).toFixed(1)} s after it was lifted`);
      expectComplete(run);
      // Nothing reached the model while the hole held (bytes dropped): only calls sent before it.
      expect(f.llm.requests.filter((r) => r.startedAt > window.from + 500 && r.startedAt < window.to)).toEqual([]);
      // No fallback was taken for a provider that was only unreachable.
      expect(result.notes.join('\n')).not.toMatch(/too slow|fall ?back/i);
      const { explained, unexplained } = repeats(f.llm, window);
      expect(unexplained).toEqual([]);
      // The researcher turns in flight when the hole opened were answered into it, and asked again.
      expect(explained.length).toBeGreaterThanOrEqual(1);
      for (const e of explained) expect(e).toMatch(/^react ×2 /);
    },
    HOLE_MS + 240_000,
  );

  it(
    'a worker whose connections to all three are reset (RST) for a while completes the run',
    async () => {
      const run = await runWithFault(SERVICES, 'cut', CUT_MS);
      expectComplete(run);
      expect(repeats(f.llm, run.window).unexplained).toEqual([]);
      expect(worker.child.exitCode).toBeNull();
    },
    CUT_MS + 240_000,
  );

  it('a slow network (100 ms each way on all three) only costs time', async () => {
    for (const s of SERVICES) await proxy.fault(s, 'latency', 100);
    try {
      const run = await runWithFault([], 'latency', 0);
      expect(run.result).toMatchObject({ status: 'completed', outcome: 'report' });
      expect(run.result.steps?.map((s) => s.status)).toEqual(['completed', 'completed']);
      expect(repeatedCompleted(f.llm)).toBe(0);
    } finally {
      for (const s of SERVICES) await proxy.restore(s);
    }
  }, 240_000);
});
