// The sandbox activity: runs model-written Python in a locked-down Docker container
// (container.ts), with a wall-clock kill and capped output (output.ts), and records the result
// once, so a retry after the container finished returns it instead of running the code again.
// Containers of a run that a crashed worker left behind are removed by the next attempt or swept.
// Input files named by source id (the researcher's python tool) are read from the store first.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type Docker from 'dockerode';
import { ErrorType } from '../../shared/errors';
import { activityCallKey, keep, shutdownFailure } from '../attempt';
import type { Store } from '../store';
import { bootstrapInput, containerSpec, removeContainers, SANDBOX_LABEL } from './container';
import { inputBytes, MAX_INPUT_BYTES, sourceFiles } from './inputs';
import { artifactType, notRun, OutputCollector, resultOfRun, resultWithoutOutput } from './output';
import type { ArtifactRef, SandboxInput, SandboxLimits, SandboxResult } from './types';
import { metrics } from '../../infra/metrics';

export { SANDBOX_LABEL } from './container';
export type { ArtifactRef, SandboxInput, SandboxLimits, SandboxResult } from './types';

/** Seconds after the time limit that the worker kills a container whose bootstrap did not. */
const HARD_KILL_GRACE_S = 15;
/** Seconds after the time limit that a container counts as left behind. */
const EXPIRY_GRACE_S = 60;

type SandboxDeps = { docker: Docker; store: Store; limits: SandboxLimits };

export function createSandboxActivities(deps: SandboxDeps) {
  const { docker, store } = deps;

  async function runCode(input: SandboxInput): Promise<SandboxResult> {
    const callKey = activityCallKey();
    const stored = await store.sandboxRuns.find<SandboxResult>(callKey);
    if (stored) return stored;
    const withInputs = await resolveInputs(store, input);
    if (typeof withInputs === 'string') return record(store, callKey, input, notRun(withInputs));
    // An earlier attempt of this activity (on a worker that died) may have left its container.
    await removeContainers(docker, { label: [`${SANDBOX_LABEL}.activity=${callKey}`] });
    const container = await createContainer(deps, withInputs, callKey);
    try {
      return await record(store, callKey, input, await run(deps, container, withInputs));
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /**
   * Removes sandbox containers past their expiry: what a crashed worker left behind. `run`
   * limits the sweep to one research run's containers.
   */
  async function sweepSandboxes(now = Date.now(), run?: string): Promise<number> {
    const label = run ? [SANDBOX_LABEL, `${SANDBOX_LABEL}.run=${run}`] : [SANDBOX_LABEL];
    return removeContainers(docker, { label }, (c) => Number(c.Labels[`${SANDBOX_LABEL}.expires`] ?? 0) >= now);
  }

  return { runCode, sweepSandboxes };
}

/** Recorded once per activity: a retry after this returns the same result without running again. */
async function record(store: Store, callKey: string, input: SandboxInput, result: SandboxResult): Promise<SandboxResult> {
  metrics.sandboxRuns.inc({ status: result.status });
  await keep(() =>
    store.sandboxRuns.record({
      callKey,
      researchId: input.researchId,
      stepId: input.stepId,
      attempt: input.attempt,
      status: result.status,
      result,
    }),
  );
  return result;
}

/** The input with the sources it names read as files, or why the program cannot run with them. */
async function resolveInputs(store: Store, input: SandboxInput): Promise<SandboxInput | string> {
  const fromSources = await sourceFiles(store, input.researchId, input.sources ?? []);
  if (fromSources.missing.length) {
    return `no source ${fromSources.missing.join(', ')} in this run: name input files by the source ids that tool results gave`;
  }
  const files = [...fromSources.files, ...(input.files ?? [])];
  const bytes = inputBytes(files);
  if (bytes > MAX_INPUT_BYTES) return `the input files are ${bytes} bytes, more than the ${MAX_INPUT_BYTES} a program may get`;
  return { ...input, files };
}

async function createContainer({ docker, limits }: SandboxDeps, input: SandboxInput, callKey: string): Promise<Docker.Container> {
  try {
    return await docker.createContainer(
      containerSpec(limits, input, callKey, Date.now() + (limits.timeoutSeconds + EXPIRY_GRACE_S) * 1000),
    );
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) {
      throw ApplicationFailure.nonRetryable(
        `sandbox image ${limits.image} is missing: build it with sandbox/build-offline.sh`,
        ErrorType.SandboxImageMissing,
      );
    }
    throw err;
  }
}

/** Starts the container, feeds the bootstrap its input, waits, and reads what it left. */
async function run({ store, limits }: SandboxDeps, container: Docker.Container, input: SandboxInput): Promise<SandboxResult> {
  const ctx = Context.current();
  const started = Date.now();
  const output = new OutputCollector(limits);
  const beat = setInterval(() => ctx.heartbeat({ elapsedMs: Date.now() - started }), 5_000);
  const kill = () => container.kill().catch(() => undefined);
  ctx.cancellationSignal.addEventListener('abort', kill, { once: true });
  let timedOutHard = false;
  try {
    const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
    container.modem.demuxStream(stream, output.stdout, output.stderr);
    await container.start();
    stream.end(bootstrapInput(limits, input));
    // The bootstrap kills the code at the time limit; this is the guard against the bootstrap.
    const hard = setTimeout(
      () => {
        timedOutHard = true;
        void kill();
      },
      (limits.timeoutSeconds + HARD_KILL_GRACE_S) * 1000,
    );
    try {
      await container.wait();
    } finally {
      clearTimeout(hard);
    }
    if (output.tooLarge) {
      throw ApplicationFailure.nonRetryable('the program printed more than any result can be', ErrorType.SandboxOutputTooLarge);
    }
    const state = (await container.inspect()).State;
    const bootstrap = output.result();
    if (ctx.cancellationSignal.aborted) {
      throw (
        shutdownFailure('a sandbox run') ??
        ApplicationFailure.create({ message: 'sandbox run cancelled', type: ErrorType.SandboxCancelled, nonRetryable: true })
      );
    }
    if (!bootstrap) return resultWithoutOutput(limits, state, timedOutHard, output.stderrText(), Date.now() - started);
    const rejected = [...bootstrap.rejected];
    const files = bootstrap.artifacts.map((a) => ({ name: a.name, data: Buffer.from(a.b64, 'base64') }));
    const artifacts = await storeArtifacts(store, input, files, rejected);
    return resultOfRun(limits, bootstrap, state.OOMKilled, artifacts, rejected);
  } finally {
    clearInterval(beat);
    ctx.cancellationSignal.removeEventListener('abort', kill);
  }
}

async function storeArtifacts(
  store: Store,
  input: SandboxInput,
  items: { name: string; data: Buffer }[],
  rejected: SandboxResult['rejected'],
): Promise<ArtifactRef[]> {
  const refs: ArtifactRef[] = [];
  for (const it of items) {
    const safeName = it.name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
    const type = artifactType(safeName, it.data);
    if (!type) {
      rejected.push({ name: it.name, reason: 'type not kept (png, jpg, svg, csv, json, txt, md)' });
      continue;
    }
    const artifactId = `${input.stepId}-${input.attempt}-${safeName}`;
    await store.saveArtifact(input.researchId, { artifactId, stepId: input.stepId, name: safeName, contentType: type, bytes: it.data });
    refs.push({ artifactId, name: safeName, contentType: type, bytes: it.data.length });
  }
  return refs;
}
