// Sandbox overhead: container create to result for a trivial script, median over N runs, against
// a baseline in the same run: the same script as a plain python3 process on the host.
//   node bin/run-ts.mjs bench/sandbox-overhead.ts [--runs 20]
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createSandboxActivities, type SandboxResult } from '../src/activities/sandbox';
import { createStore } from '../src/activities/store';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/infra/logger';
import { migrate } from '../src/infra/migrate';
import { createPool, startEmbeddedPostgres } from '../src/infra/postgres';
import { freePort } from '../test/support/spawn';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);
const SCRIPT = "print('hello from the sandbox')";

const pg = await startEmbeddedPostgres({
  dataDir: mkdtempSync(path.join(os.tmpdir(), 'bench-sb-')),
  port: await freePort(),
  log: createLogger('warn'),
});
const pool = createPool(pg.url, 2);
await migrate(pool);
const sb = loadConfig({}).sandbox;
const sandbox = createSandboxActivities({
  docker: new Docker({ socketPath: sb.dockerSocket }),
  store: createStore(pool),
  limits: {
    image: sb.image,
    memoryMb: sb.memoryMb,
    cpus: sb.cpus,
    pids: sb.pids,
    timeoutSeconds: sb.timeoutSeconds,
    outputBytes: 65_536,
    artifactFiles: 20,
    artifactFileBytes: 5_000_000,
    artifactTotalBytes: 20_000_000,
  },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const host: number[] = [];
const boxed: number[] = [];
for (let i = 0; i <= runs; i++) {
  let t0 = performance.now();
  const r = spawnSync('python3', ['-c', SCRIPT], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`host python failed: ${r.stderr}`);
  const hostMs = performance.now() - t0;
  t0 = performance.now();
  const res = (await new MockActivityEnvironment({ activityId: randomUUID() }).run(sandbox.runCode, {
    researchId: 'bench',
    stepId: 's',
    attempt: i,
    code: SCRIPT,
  })) as SandboxResult;
  const boxMs = performance.now() - t0;
  if (res.status !== 'ok' || !res.stdout.includes('hello')) throw new Error(`sandbox run failed: ${JSON.stringify(res)}`);
  if (i === 0) continue; // warm-up
  host.push(hostMs);
  boxed.push(boxMs);
}
console.log(`trivial script, ${runs} runs after a warm-up (medians)`);
console.log(`host python3 process:            ${median(host).toFixed(0)} ms`);
const p90 = [...boxed].sort((a, b) => a - b)[Math.floor(boxed.length * 0.9)]!;
console.log(`sandbox (create → result → rm):  ${median(boxed).toFixed(0)} ms (p90 ${p90.toFixed(0)} ms)`);
console.log(
  `overhead:                        ${(median(boxed) - median(host)).toFixed(0)} ms, ratio ${(median(boxed) / median(host)).toFixed(1)}x`,
);
await pool.end();
await pg.stop();
