// Real PostgreSQL stops in the middle of a run (a cluster of its own, so the rest of the suite
// keeps its database) for several times the model calls' heartbeat timeout and claim, and starts
// again: the store's calls wait it out, the run completes with every step, and no completed LLM
// call is paid for twice.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/infra/migrate';
import type { ResearchResult } from '../../src/shared/schemas';
import { defaultReact, planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { missingReason, temporalAddress } from '../support/services';
import { freePort } from '../support/spawn';
import { repeatedCompleted, startRun, untilAsked } from '../support/faults';

const CI = process.env.CI === 'true';
const version = existsSync('/usr/lib/postgresql')
  ? execFileSync('ls', ['/usr/lib/postgresql']).toString().trim().split('\n').sort().at(-1)
  : undefined;
const canManage = Boolean(version && existsSync('/usr/bin/pg_createcluster') && process.getuid?.() === 0);
const ready = Boolean(temporalAddress() && (canManage || CI));
const cluster = `fault${process.pid}`;
/** A test-sized heartbeat timeout for the model calls (the default is 15 s); a call's claim lives
 *  twice that. The outage outlasts both several times over (as 60 s did the defaults), and the
 *  10 s of the pool's connection timeout and of a workflow task twice. */
const HEARTBEAT_TIMEOUT = '4s';
const OUTAGE_MS = 20_000;
/** Each step's first researcher turn takes this long: longer than stopping the cluster, so the
 *  model answers it while the database is away (and well within the model calls' timeout). */
const SLOW_TURN_MS = 4_000;

const pgctl = (...args: string[]) => execFileSync('pg_ctlcluster', [version!, cluster, ...args], { stdio: 'pipe' });

describe.skipIf(!ready)(`a PostgreSQL outage (${ready ? 'live' : missingReason() || 'needs root and pg_createcluster'})`, () => {
  let h: Harness;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    execFileSync('pg_createcluster', [version!, cluster, '-p', String(port), '--', '--auth-host=trust', '--auth-local=trust'], {
      stdio: 'pipe',
    });
    pgctl('start');
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await migrate(pool);
    await pool.end();
    h = await startHarness({ databaseUrl: url, env: { LLM_HEARTBEAT_TIMEOUT: HEARTBEAT_TIMEOUT, LLM_TIMEOUT_MS: '20000' } });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    execFileSync('pg_dropcluster', [version!, cluster, '--stop'], { stdio: 'pipe' });
  });

  it(`waits out ${OUTAGE_MS / 1000} s without its database mid-run and completes every step`, async () => {
    h.llm.script(
      researchRules(
        { react: (req, n) => ({ ...(defaultReact(req) as object), ...(n < 2 ? { delayMs: SLOW_TURN_MS } : {}) }) as never },
        planJson([{ id: 'a' }, { id: 'b' }]),
      ),
    );
    const handle = await startRun(h);
    await untilAsked(h.llm, 'react');
    pgctl('stop', '-m', 'fast');
    const down = Date.now();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    // The outage held the run up: it had not ended when the database came back.
    const during = (await handle.describe()).status.name;
    const up = Date.now();
    pgctl('start');

    const result = (await handle.result()) as ResearchResult;
    expect(during).toBe('RUNNING');
    // A model answer was paid for while the database was away: kept until it took it, not paid again.
    expect(
      h.llm
        .completed()
        .filter((r) => r.endedAt! > down && r.endedAt! < up)
        .map((r) => r.rule),
    ).toContain('react');
    expect(result.status).toBe('completed');
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    expect(repeatedCompleted(h.llm)).toBe(0);
    // The run's row is there and final.
    const { rows } = await h.pool.query('SELECT status FROM research_runs WHERE id = $1', [handle.workflowId]);
    expect(rows).toEqual([{ status: 'completed' }]);
    // The run had the test's heartbeat timeout (the operator's setting, handed to every run), which
    // the outage outlasted.
    const started = (await handle.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as { retry?: { heartbeatTimeout?: string } };
    expect(input.retry?.heartbeatTimeout).toBe(HEARTBEAT_TIMEOUT);
  }, 180_000);
});
