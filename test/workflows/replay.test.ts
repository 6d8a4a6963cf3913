// Replays recorded histories against the current workflow code: a change that would break
// running executions (without patched()) fails here. Refresh with RECORD_HISTORIES=1 on purpose.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/spawn';
import { workflowBundle } from '../support/services';

const dir = path.join(ROOT, 'test', 'histories');
const ids = JSON.parse(readFileSync(path.join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');

describe('replay of recorded histories', () => {
  it('has recorded histories to replay', () => {
    // v1: the search-and-summarise researcher (before patched('react-researcher')); unversioned:
    // ReAct; v3: recorded before the workflow was split into phase modules (clarification,
    // revision, reflection retry, MCP, coder and sandbox, budget stop, direct answer, cancel).
    expect(files).toEqual(
      expect.arrayContaining([
        'research-reviewed-v1.json',
        'researcher-step-v1.json',
        'research-reviewed.json',
        'researcher-step.json',
        'research-full-v3.json',
        'researcher-step-v3.json',
        'coder-step-v3.json',
        'research-budget-v3.json',
        'research-direct-v3.json',
        'research-cancelled-v3.json',
        // v4: a step cancelled by an operator, review timeout approved, deadline after review.
        'research-operator-v4.json',
        // v5: an LLM outage mid-step (workers' callWait signals, forwarded from the step to the
        // run), review approved, a token budget split between parallel steps.
        'research-waits-v5.json',
        'researcher-step-v5.json',
        // v6: review and clarification by Workflow Update (a clarification answered, a refused
        // stale approval, a revision, an approval); the signal kind lives on in v1-v5.
        'research-updates-v6.json',
        // v7: the row kept up with the state (patch 'row-sync', the source of the run's events),
        // review by update, a coder step after a research step.
        'research-events-v7.json',
        'coder-step-v7.json',
        // v8: the knowledge base (patch 'knowledge-base'): a follow-up in a session (memory, the
        // collection decision, knowledge search, the report indexed), its researcher step with a
        // knowledge_search call, and a document's ingestion workflow.
        'research-knowledge-v8.json',
        'researcher-knowledge-v8.json',
        'ingest-document-v8.json',
        // v9: gap reflection after the team (patch 'gap-reflection'): a reported gap adds a step,
        // plan version 2, the team runs it before the report.
        'research-gaps-v9.json',
        // v10: the claim check after the reporter (patch 'claim-check'), one citation removed.
        'research-claims-v10.json',
        // A deep run: six steps, a long report written section by section, then the claim check.
        'research-long-v10.json',
        // v11: the researcher's python tool (patch 'researcher-python'): a crawled CSV, a failing
        // program, one naming an unknown source, then one that computes and keeps a chart.
        'researcher-python-v11.json',
        // v12: tool results written by the next researcher turn (patch 'fold-tool-results').
        'researcher-fold-v12.json',
        // v12: the run row written by local activities (patch 'local-row-writes').
        'research-local-v12.json',
        // v13: one patch marker per execution for every patch (patch 'lean-history'), no upserts
        // of the start's own attributes, MCP discovery and the collection lookup as local
        // activities; a reviewed run and its first researcher step.
        'research-lean-v13.json',
        'researcher-lean-v13.json',
        // Steering (the steer update): guidance stored by a local activity, a step's new
        // description, an added step; a wrap-up signalled to the running step, a dropped step.
        'research-steered-v13.json',
        'research-wrapup-v13.json',
        'researcher-wrapup-v13.json',
        // A domain banned mid-run (stored by a local activity in the update handler).
        'research-ban-v13.json',
        // The second run of a schedule: its report compared with the first ("What changed since").
        'research-scheduled-v13.json',
        // A run of a tenant with TENANT_MAX_RUNS: it starts its tenant's admission queue, asks for
        // a slot, researches when granted and gives the slot back; and that queue's history.
        'research-admitted-v13.json',
        'admission-queue-v13.json',
        // Pages the user named mid-run (steer mustRead): a step added to read them, and that step,
        // which reads them before its first turn.
        'research-mustread-v13.json',
        'researcher-pages-v13.json',
        // v14: the second lean generation ('lean-history-2'): a step's first turn discovers its
        // MCP tools (patch 'turn-discovers-mcp') instead of a local activity before it.
        'research-lean2-v14.json',
        'researcher-lean2-v14.json',
      ]),
    );
  });

  it.each(files)('%s replays without nondeterminism', async (file) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { events: unknown[] };
    expect(history.events.length).toBeGreaterThan(10);
    expect(ids[file]).toBeTypeOf('string');
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, ids[file]);
  });
});
