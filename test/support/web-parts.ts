// What the tests of activities that do the work of several (the background phase, a researcher
// turn with its web tools) share: PostgreSQL, the scripted model, a SearXNG double serving the
// fixture site's pages, the worker's activities and model over them, a run row of its own, and
// attempts of one activity execution (the same run id and activity id each time).
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createStore, type Store } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { ZERO_USAGE } from '../../src/shared/plain';
import { FixtureSite } from './fixture-site';
import { testConfig } from './harness';
import { ScriptedLlmServer } from './llm-server';
import { searchResults } from './research-script';
import { FakeSearxng } from './search-server';
import { databaseUrl } from './services';

/** A page extraction the scripted model gives. */
export const EXTRACT = { relevant: true, evidence: 'Solar LCOE fell 89% from 2010 to 2022.', summary: 'Solar got much cheaper.' };

export class WebParts {
  readonly site = new FixtureSite();
  readonly search = new FakeSearxng();
  readonly llm = new ScriptedLlmServer();
  pool!: ReturnType<typeof createPool>;
  store!: Store;
  groups!: ReturnType<typeof createActivities>;
  model!: ReturnType<typeof createLlm>;

  async start(): Promise<void> {
    await this.site.start();
    await this.search.start();
    await this.llm.start();
    this.search.setFallback(searchResults(this.site.url));
    this.pool = createPool(databaseUrl()!, 4);
    this.store = createStore(this.pool);
    const config = testConfig(this.llm.url, {
      SEARXNG_URL: this.search.url,
      SEARCH_PROVIDERS: 'searxng',
      CRAWL_ALLOW_HOSTS: new URL(this.site.url).host,
    });
    this.groups = createActivities({ config, pool: this.pool });
    const client = createLlmClient(testConfig(this.llm.url));
    this.model = createLlm({
      config: testConfig(this.llm.url),
      calls: this.store.llmCalls,
      leases: this.store.llmLeases,
      client: () => client,
    });
  }

  async close(): Promise<void> {
    await this.pool?.end();
    await this.site.close();
    await this.search.close();
    await this.llm.close();
  }

  /** A run row of its own (searches read its bans and time range); returns its id. */
  async newRun(prefix: string): Promise<string> {
    const researchId = `${prefix}-${randomUUID()}`;
    await this.store.runs.record({ id: researchId, tenant: prefix, question: 'Solar?', status: 'running', usage: ZERO_USAGE });
    return researchId;
  }

  /** Requests the scripted model answered with the rule named `rule`. */
  asked(rule: string): number {
    return this.llm.requests.filter((r) => r.rule === rule).length;
  }
}

/** Attempt `n` of one execution of the activity `activityId` for the run `input.researchId`. */
export function attemptOf(activityId: string, heartbeatTimeoutMs: number) {
  return <I extends { researchId: string }, O>(input: I, n: number, fn: (i: I) => Promise<O>): Promise<O> =>
    new MockActivityEnvironment({
      activityId,
      attempt: n,
      heartbeatTimeoutMs,
      workflowExecution: { workflowId: input.researchId, runId: input.researchId },
    }).run<[I], O, (i: I) => Promise<O>>(fn, input);
}
