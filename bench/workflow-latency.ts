// Orchestration overhead of a research run: with a fixed LLM latency and 4 independent steps
// (three ReAct researchers and, with Docker, one coder), wall time ÷ the LLM critical path measured
// from the scripted server's request log of that run (bench/critical-path.ts): the longest chain
// of calls each starting after the previous ended. Also the run's history size and its largest
// payload. Runs on a real Temporal dev server and an embedded PGlite database.
//   node bin/run-ts.mjs bench/workflow-latency.ts [--latency 500] [--runs 3] [--no-coder] [--gaps] [--timeline]
//        [--llm-rate N]
// --gaps prints the last run's chain: the wait before each call on it (what orchestration added),
// split into the previous call's activity after its answer (tail), Temporal and the activities in
// between (between), and this call's activity before its request (head).
// --timeline prints the last run and its first step event by event, with the time since the one
// before (where a hop's time goes: workflow tasks, activity dispatch), and each step's duration.
// --llm-rate sets LLM_QUEUE_RATE (the product's default of 10 model calls a second otherwise).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/infra/logger';
import { migrate } from '../src/infra/migrate';
import { createPool, startEmbeddedPostgres } from '../src/infra/postgres';
import { dynamicConfigArgs, findTemporalCli } from '../src/infra/temporal-cli';
import { ResearchOptions, type ResearchResult } from '../src/shared/schemas';
import { bundleWorkflows, createWorker } from '../src/worker';
import { ResearchPhaseKey, ResearchStatusKey, ResearchStepCountKey, ResearchTenantKey } from '../src/workflows/search-attributes';
import { ScriptedLlmServer } from '../test/support/llm-server';
import { planJson, researchRules, searchResults } from '../test/support/research-script';
import { FakeSearxng } from '../test/support/search-server';
import { freePort } from '../test/support/spawn';
import { describeChain, llmCriticalPath, type ActivitySpan } from './critical-path';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '500' },
    runs: { type: 'string', default: '3' },
    'no-coder': { type: 'boolean' },
    gaps: { type: 'boolean' },
    timeline: { type: 'boolean' },
    'llm-rate': { type: 'string' },
  },
});
const latency = Number(values.latency);
const runs = Number(values.runs);

Runtime.install({ logger: new DefaultLogger('ERROR') });
const cli = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
if (!cli) throw new Error('no Temporal CLI');
const env = await TestWorkflowEnvironment.createLocal({
  server: {
    executable: { type: 'existing-path', path: cli.path },
    searchAttributes: [ResearchStatusKey, ResearchPhaseKey, ResearchTenantKey, ResearchStepCountKey],
    // The dynamic config of `deep-research dev`'s server: one partition per task queue, fairness.
    extraArgs: dynamicConfigArgs(),
  },
});
const pg = await startEmbeddedPostgres({
  dataDir: mkdtempSync(path.join(os.tmpdir(), 'bench-pg-')),
  port: await freePort(),
  log: createLogger('warn'),
});
const pool = createPool(pg.url, 8);
await migrate(pool);
const llm = await new ScriptedLlmServer().start();
llm.latencyMs = latency;
const search = await new FakeSearxng({}, searchResults('http://fixture.test')).start();
const config = loadConfig({
  OPENAI_BASE_URL: llm.url,
  OPENAI_API_KEY: 'sk-bench',
  SEARXNG_URL: search.url,
  SEARCH_PROVIDERS: 'searxng',
  LOG_LEVEL: 'warn',
  ...(values['llm-rate'] ? { LLM_QUEUE_RATE: values['llm-rate'] } : {}),
});
const coder = !values['no-coder'] && (await dockerHasImage(config.sandbox.dockerSocket, config.sandbox.image));
const taskQueue = `bench-${randomUUID()}`;
const worker = await createWorker({ config, connection: env.nativeConnection, pool, taskQueue, workflowBundle: await bundleWorkflows() });

async function dockerHasImage(socketPath: string, image: string): Promise<boolean> {
  const { default: Docker } = await import('dockerode');
  try {
    await new Docker({ socketPath }).getImage(image).inspect();
    return true;
  } catch {
    return false;
  }
}

interface Sample {
  wallMs: number;
  pathMs: number;
  pathCalls: number;
  llmCalls: number;
  historyBytes: number;
  childHistoryBytes: number;
  maxPayloadBytes: number;
  events: number;
}

function payloadSizes(node: unknown, out: number[]): void {
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (o.data instanceof Uint8Array && 'metadata' in o) out.push(o.data.byteLength);
  for (const v of Object.values(o)) payloadSizes(v, out);
}

async function sizeOf(workflowId: string): Promise<{ bytes: number; maxPayload: number; events: number }> {
  const handle = env.client.workflow.getHandle(workflowId);
  const desc = await handle.describe();
  const history = await handle.fetchHistory();
  const sizes: number[] = [];
  payloadSizes(history, sizes);
  return {
    bytes: Number(desc.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
    maxPayload: Math.max(0, ...sizes),
    events: history.events?.length ?? 0,
  };
}

let lastChain = '';
let lastTimeline = '';

const eventName = (type: proto.temporal.api.enums.v1.EventType | null | undefined): string =>
  type === null || type === undefined ? '?' : String(proto.temporal.api.enums.v1.EventType[type]).replace(/^EVENT_TYPE_/, '');

/** Milliseconds from a workflow's first event to its last. */
async function spanOf(workflowId: string): Promise<number> {
  const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const at = (e: (typeof events)[number] | undefined) =>
    Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.round((e?.eventTime?.nanos ?? 0) / 1e6);
  return at(events.at(-1)) - at(events[0]);
}

/** The activity type of a local activity's marker. */
function localActivityType(marker: proto.temporal.api.history.v1.IMarkerRecordedEventAttributes | null | undefined): string | undefined {
  const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
  if (!data) return undefined;
  const type = (JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }).activity_type;
  return type ? `local ${type}` : undefined;
}

/** A workflow's events with the time since the one before, for --timeline. */
async function timeline(workflowId: string): Promise<string> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  let prev: number | undefined;
  return (history.events ?? [])
    .map((e) => {
      const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
      const what =
        e.activityTaskScheduledEventAttributes?.activityType?.name ??
        localActivityType(e.markerRecordedEventAttributes) ??
        e.markerRecordedEventAttributes?.markerName ??
        e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ??
        '';
      const line = `  +${String(prev === undefined ? 0 : at - prev).padStart(5)} ms  ${eventName(e.eventType)}${what ? ` ${what}` : ''}`;
      prev = at;
      return line;
    })
    .join('\n');
}
/** The activities of these workflows with their times, from their histories. */
async function activitySpans(workflowIds: string[]): Promise<ActivitySpan[]> {
  const spans: ActivitySpan[] = [];
  for (const wid of workflowIds) {
    const history = await env.client.workflow.getHandle(wid).fetchHistory();
    const at = new Map<string, number>();
    const typeOf = new Map<string, string>();
    for (const e of history.events ?? []) {
      const t = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
      at.set(String(e.eventId), t);
      const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type) typeOf.set(String(e.eventId), type);
      const done = e.activityTaskCompletedEventAttributes;
      if (done) {
        const scheduled = String(done.scheduledEventId);
        spans.push({
          type: typeOf.get(scheduled) ?? '?',
          scheduledAt: at.get(scheduled)!,
          startedAt: at.get(String(done.startedEventId))!,
          completedAt: t,
        });
      }
    }
  }
  return spans;
}

async function oneRun(): Promise<Sample> {
  llm.script(
    researchRules({}, planJson([{ id: 's1' }, { id: 's2' }, { id: 's3' }, { id: 's4', type: coder ? 'processing' : 'research' }])),
  );
  const id = `research-bench-${randomUUID()}`;
  const t0 = performance.now();
  const startedAt = Date.now();
  const result = (await env.client.workflow.execute('researchWorkflow', {
    taskQueue,
    workflowId: id,
    args: [
      {
        question: 'How much cheaper has solar power become since 2010?',
        tenant: 'bench',
        options: ResearchOptions.parse({ autoAcceptPlan: true, maxSteps: 4, maxConcurrentSteps: 4 }),
      },
    ],
  })) as ResearchResult;
  const wallMs = performance.now() - t0;
  const chain = llmCriticalPath(llm.requests);
  const lastEnd = chain.chain.at(-1)?.endedAt ?? startedAt;
  if (values.gaps)
    lastChain = `${describeChain(chain, startedAt, await activitySpans([id, ...['s1', 's2', 's3', 's4'].map((s) => `${id}/step/${s}`)]))}\n  +${String(Date.now() - lastEnd).padStart(5)} ms to the result`;
  if (result.steps?.some((s) => s.status !== 'completed' || s.attempts !== 1))
    throw new Error(`unexpected steps ${JSON.stringify(result.steps)}`);
  if (values.timeline) {
    const spans = await Promise.all(['s1', 's2', 's3', 's4'].map(async (s) => `${s} ${await spanOf(`${id}/step/${s}`)} ms`));
    lastTimeline = `${id}:\n${await timeline(id)}\n${id}/step/s1:\n${await timeline(`${id}/step/s1`)}\nsteps, first to last event: ${spans.join(', ')}`;
  }
  const parent = await sizeOf(id);
  const children = await Promise.all(['s1', 's2', 's3', 's4'].map((s) => sizeOf(`${id}/step/${s}`)));
  return {
    wallMs,
    pathMs: chain.ms,
    pathCalls: chain.calls,
    llmCalls: llm.requests.length,
    historyBytes: parent.bytes,
    childHistoryBytes: children.reduce((a, c) => a + c.bytes, 0),
    maxPayloadBytes: Math.max(parent.maxPayload, ...children.map((c) => c.maxPayload)),
    events: parent.events,
  };
}

const samples: Sample[] = [];
await worker.runUntil(async () => {
  await oneRun(); // warm-up: workflow bundle load, connections, JIT
  for (let i = 0; i < runs; i++) samples.push(await oneRun());
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const wall = median(samples.map((s) => s.wallMs));
const critical = median(samples.map((s) => s.pathMs));
console.log(
  `LLM latency ${latency} ms per call, 4 independent steps (${coder ? '3 researchers and a coder' : '4 researchers; no sandbox image'}), ${runs} runs after a warm-up (medians)`,
);
console.log(
  `critical path: ${median(samples.map((s) => s.pathCalls))} sequential LLM calls = ${critical.toFixed(0)} ms, measured from the request log (${median(samples.map((s) => s.llmCalls))} calls in all)`,
);
console.log(`wall time:     ${wall.toFixed(0)} ms`);
console.log(`ratio:         ${median(samples.map((s) => s.wallMs / s.pathMs)).toFixed(3)} (goal <= 1.15)`);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const parentKb = kb(median(samples.map((s) => s.historyBytes)));
const childrenKb = kb(median(samples.map((s) => s.childHistoryBytes)));
console.log(
  `history:       parent ${parentKb} KB in ${median(samples.map((s) => s.events))} events; 4 children ${childrenKb} KB together (goal <= 300 KB)`,
);
if (lastTimeline) console.log(`the last run's first step, event by event:\n${lastTimeline}`);
if (lastChain) console.log(`the last run's chain (wait before each call, then the call):\n${lastChain}`);
console.log(`largest payload: ${Math.max(...samples.map((s) => s.maxPayloadBytes))} bytes (goal <= 65536)`);

await pool.end();
await pg.stop();
await llm.close();
await search.close();
await env.teardown();
