// Real PostgreSQL stops for 60 s in the middle of a run (a cluster of its own, so the rest of the
// suite keeps its database) and starts again: the store's calls wait it out, the run completes
// with every step, and no completed LLM call is paid for twice.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/infra/migrate';
import type { ResearchResult } from '../../src/shared/schemas';
import { planJson, researchRules } from '../support/research-script';
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
const OUTAGE_MS = 60_000;

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
    h = await startHarness({ databaseUrl: url });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    execFileSync('pg_dropcluster', [version!, cluster, '--stop'], { stdio: 'pipe' });
  });

  it('waits out 60 s without its database mid-run and completes every step', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }, { id: 'b' }])));
    const handle = await startRun(h);
    await untilAsked(h.llm, 'react');
    pgctl('stop', '-m', 'fast');
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    pgctl('start');

    const result = (await handle.result()) as ResearchResult;
    expect(result.status).toBe('completed');
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    expect(repeatedCompleted(h.llm)).toBe(0);
    // The run's row is there and final.
    const { rows } = await h.pool.query('SELECT status FROM research_runs WHERE id = $1', [handle.workflowId]);
    expect(rows).toEqual([{ status: 'completed' }]);
  }, 180_000);
});
