// `git pull && npm start` with runs in flight: `deep-research dev` started three times on a copy of
// the project whose workflow code changes between the starts (a step's shape: a timer before its
// first turn). A run waiting for review and a run mid-step go on across both changes:
// - A -> B, A's bundle still cached: the earlier build is served again; the waiting run moves to
//   B at its wait, the step keeps going on A.
// - B -> C, A's bundle gone: the step's history does not replay on C, so it goes back to where C
//   replays to, with a line in its timeline; the waiting run moves from B to C at its wait.
// Both complete on C, and no model call that had finished is made again.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ScriptedLlmServer } from '../support/llm-server';
import { defaultReact, planJson, researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { missingReason } from '../support/services';
import { devEnv } from '../support/dev-env';
import { ROOT, spawnCli, type Spawned } from '../support/spawn';
import { cachedBundlePath, workflowBundleKey } from '../../src/infra/workflow-bundle';

const cli = inject('temporalCliPath');
const RESEARCHER = 'src/workflows/researcher.ts';

/** A copy of the project whose src/ can change: its own src/, and bin/ and scripts/ (which load
 *  src/ relative to where they really are: the bundler among them), its own bundle cache (holding
 *  this code's bundle only), everything else linked. */
function copyProject(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dr-newcode-'));
  for (const entry of readdirSync(ROOT)) {
    if (['.git', '.data', 'node_modules', 'src', 'bin', 'scripts', 'test'].includes(entry)) continue;
    symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  cpSync(path.join(ROOT, 'src'), path.join(dir, 'src'), { recursive: true });
  for (const own of ['bin', 'scripts']) cpSync(path.join(ROOT, own), path.join(dir, own), { recursive: true });
  mkdirSync(path.join(dir, 'node_modules'));
  for (const entry of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry !== '.cache') symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(dir, 'node_modules', entry));
  }
  // Build A is this code: its bundle (built once for the test run, before the suite) is copied in.
  // B and C, the changed code, are bundled by dev.
  const bundle = cachedBundlePath(workflowBundleKey(ROOT));
  if (existsSync(bundle)) {
    mkdirSync(path.join(dir, 'node_modules', '.cache', 'deep-research'), { recursive: true });
    cpSync(bundle, path.join(dir, 'node_modules', '.cache', 'deep-research', path.basename(bundle)));
  }
  return dir;
}

/** The step's shape changed: a timer of `seconds` before anything else it does. */
function stepStartsWithTimer(root: string, seconds: number): void {
  const file = path.join(root, RESEARCHER);
  const pristine = readFileSync(path.join(ROOT, RESEARCHER), 'utf8');
  const changed = pristine
    .replace("import { setHandler } from '@temporalio/workflow';", "import { setHandler, sleep } from '@temporalio/workflow';")
    .replace(
      'export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {\n',
      `export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {\n  await sleep('${seconds}s');\n`,
    );
  expect(changed).toContain(`await sleep('${seconds}s')`);
  writeFileSync(file, changed);
}

describe.skipIf(!cli)(`deep-research dev onto changed workflow code (${cli ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  let root: string;
  let env: Record<string, string>;
  let dev: Spawned | undefined;
  let temporal: Client;
  let connection: Connection;

  beforeAll(async () => {
    await llm.start();
    await search.start();
    root = copyProject();
    const base = await devEnv({ cli: cli!, llmUrl: llm.url, searchUrl: search.url });
    env = {
      ...base.env,
      LOG_LEVEL: 'info',
      // A run at its review looks for a newer build every second (default 5 minutes).
      NEW_BUILD_CHECK: '1s',
      // A stop does not wait for the held model call (it is cancelled).
      WORKER_SHUTDOWN_GRACE_MS: '1000',
    };
  });
  afterAll(async () => {
    // SIGINT, so that dev stops its Temporal server too (a killed dev leaves it running).
    if (dev && dev.child.exitCode === null) {
      dev.child.kill('SIGINT');
      await dev.exited(60_000).catch(() => undefined);
    }
    await connection?.close();
    await llm.close();
    await search.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a run at its review and a run mid-step go on across two changes of a step: served by the earlier build, then reset with a note; both complete, no finished call made again', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    llm.script(researchRules({ react: (req) => ({ ...defaultReact(req), until: held }) }, planJson([{ id: 'a' }])));
    const start = async () => {
      dev = spawnCli(['dev'], env, [], root);
      return (await dev.waitFor(/API\s+(http:\/\/\S+)/, 120_000))[1]!;
    };
    const stop = async () => {
      dev!.child.kill('SIGINT');
      expect(await dev!.exited(60_000)).toBe(0);
    };
    const build = async (id: string) =>
      (await temporal.workflow.getHandle(id).describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;
    const waitFor = async <T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> => {
      for (const end = Date.now() + ms; ;) {
        const v = await probe();
        if (v !== undefined) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${dev?.output().slice(-4_000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };

    // Build A: one run waits for its review, another is in its step's first turn (held).
    let api = await start();
    const buildA = /build (wf-[0-9a-f]+)/.exec(dev!.output())?.[1];
    connection = await Connection.connect({ address: `127.0.0.1:${env.TEMPORAL_PORT}` });
    temporal = new Client({ connection });
    const post = async (question: string, autoAcceptPlan: boolean) => {
      const res = await fetch(`${api}/v1/research`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question, options: { autoAcceptPlan } }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };
    const view = async (id: string) => (await (await fetch(`${api}/v1/research/${id}`)).json()) as Record<string, unknown>;
    const reviewed = await post('Which runs wait for a review?', false);
    const stepping = await post('Which runs are mid-step?', true);
    await waitFor('the review', 60_000, async () => ((await view(reviewed)).status === 'awaiting_review' ? true : undefined));
    await waitFor('the step turn', 60_000, async () => (llm.requests.some((r) => r.rule === 'react') ? true : undefined));
    const stepId = `${stepping}/step/a`;
    const a = await build(reviewed);
    expect(a).toMatch(/^wf-/);
    expect(await build(stepId)).toBe(a);
    await stop();

    // Build B: A is served again from its bundle; the waiting run moves to B at its review.
    stepStartsWithTimer(root, 1);
    api = await start();
    expect(dev!.output()).toContain(`serving the runs still pinned to an earlier build`);
    const b = await waitFor('the review on B', 60_000, async () => {
      const now = await build(reviewed);
      return now && now !== a ? now : undefined;
    });
    expect((await view(reviewed)).status).toBe('awaiting_review');
    expect(await build(stepId)).toBe(a);
    await stop();

    // Build C, A's bundle gone: the step goes back to where C replays to; the review moves on to C.
    stepStartsWithTimer(root, 2);
    const cache = path.join(root, 'node_modules', '.cache', 'deep-research');
    const bundleA = readdirSync(cache).filter((f) => f === `workflow-bundle-${a!.slice(3)}.js`);
    expect(bundleA).toHaveLength(1);
    rmSync(path.join(cache, bundleA[0]!));
    api = await start();
    const c = /build (wf-[0-9a-f]+)/.exec(dev!.output())?.[1];
    let stream = '';
    try {
      const events = await fetch(`${api}/v1/research/${stepping}/events`, { signal: AbortSignal.timeout(30_000) });
      const reader = events.body!.getReader();
      while (!/event: moved/.test(stream)) stream += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
    } catch (err) {
      throw new Error(`no 'moved' event (${(err as Error).message}); events:\n${stream}\ndev:\n${dev!.output().slice(-6_000)}`);
    }
    expect(stream).toMatch(
      /Step a: The workflow code changed while this run was open, and the new code replays its history only up to event \d+: it went back to event \d+/,
    );
    release();
    await waitFor('the review on C', 60_000, async () => {
      const now = await build(reviewed);
      return now && now !== b ? now : undefined;
    });
    const approved = await fetch(`${api}/v1/research/${reviewed}/plan/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ planVersion: 1 }),
    });
    expect(approved.status).toBeLessThan(300);
    for (const id of [reviewed, stepping]) {
      const done = await waitFor(`run ${id}`, 90_000, async () => {
        const v = await view(id);
        return v.status === 'completed' || v.status === 'failed' ? v : undefined;
      });
      expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', phase: 'done' });
      expect(await build(id)).toBe(c);
    }
    expect([buildA, a, b, c].every((x) => x !== undefined)).toBe(true);
    // Each run planned once: the calls that had finished before a start were not made again.
    for (const rule of ['coordinator', 'planner']) expect(llm.completed().filter((r) => r.rule === rule)).toHaveLength(2);
    await stop();
  }, 600_000);
});
