// The activity groups the workflows proxy with different options: disjoint, complete, and typed so
// that an activity reached through another group's proxy does not compile.
import { describe, expect, it } from 'vitest';
import type { KnowledgeActivities, LlmActivities, StoreActivities } from '../../src/activities';
import { activityMap, createActivities } from '../../src/activities';
import { loadConfig } from '../../src/config';
import { createPool } from '../../src/infra/postgres';

// Compile-time checks (tsc runs over the tests): each line fails to compile if the activity
// became reachable through a proxy with the wrong timeouts and retries.
// @ts-expect-error recordRun is a store activity, not an LLM call
export type RecordRunThroughLlm = LlmActivities['recordRun'];
// @ts-expect-error researcherTurn is an LLM call, not a store activity
export type TurnThroughStore = StoreActivities['researcherTurn'];
// @ts-expect-error runCode runs only on the sandbox queue
export type RunCodeThroughLlm = LlmActivities['runCode'];
// @ts-expect-error embedChunks runs on the LLM queue (the embeddings provider), not with the parsers
export type EmbedThroughKnowledge = KnowledgeActivities['embedChunks'];

describe('activity groups', () => {
  it('register every activity in exactly one group', async () => {
    const pool = createPool('postgres://unused@127.0.0.1:1/none', 1);
    const groups = createActivities({ config: loadConfig({}), pool });
    const names = (['llm', 'store', 'crawl', 'sandbox', 'mcp', 'knowledge', 'embedding', 'notify'] as const).flatMap((g) =>
      Object.keys(groups[g]),
    );
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(activityMap(groups)).sort()).toEqual([...names].sort());
    expect(Object.keys(groups.sandbox)).toEqual(['runCode']);
    // The workers' housekeeping is not an activity, nor are the web tools the model-call activities run.
    expect(names).not.toContain('sweepSandboxes');
    expect(names).not.toContain('webSearch');
    await pool.end();
  });
});
