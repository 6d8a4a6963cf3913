// Replays recorded histories against the current workflow code: a change that would break an
// execution replaying on a new build fails here. The baseline histories were recorded on the code
// before any patch (they replay the unpatched branches); a patch adds a history recorded with it. Record them again with
// RECORD_HISTORIES=1 only on purpose (the tests that keep them call test/support/record-history.ts).
// A history recorded now takes the current patch (src/workflows/patches.ts) and none of the ones
// folded into it: recording one of those baselines again would lose the branch it replays.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/spawn';
import { workflowBundle } from '../support/services';

const dir = path.join(ROOT, 'test', 'histories');
const ids = JSON.parse(readFileSync(path.join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');

/** The baseline: every path worth replaying, with the test that records it. */
const BASELINE = [
  // research.test.ts, recorded before any patch (it now records the two below): a reviewed run and its first researcher step; a revision and a stale signal;
  // review by update; a clarification; reflection retry with the judge's feedback; a budget stop;
  // a plan with enough context; a direct answer; a cancelled run and its step; an LLM outage
  // waited out (the workers' callWait signals, forwarded from the step to the run).
  'baseline-reviewed.json',
  'baseline-researcher-step.json',
  'baseline-revised.json',
  'baseline-review-update.json',
  'baseline-clarification.json',
  'baseline-reflection.json',
  'baseline-budget.json',
  'baseline-enough-context.json',
  'baseline-direct.json',
  'baseline-cancelled.json',
  'baseline-researcher-cancelled.json',
  'baseline-waits.json',
  'baseline-researcher-waits.json',
  // coder.test.ts: a run with a coder step in the sandbox, and a step whose program is fixed.
  'baseline-coder-run.json',
  'baseline-coder-step.json',
  'baseline-coder-fix.json',
  // coder.test.ts: the same run with its coder step's findings judged in the findings activity.
  'baseline-coder-judged.json',
  'baseline-coder-step-judged.json',
  // operator-cancel.test.ts: steps cancelled and terminated by an operator, and the cancelled step.
  'baseline-operator-cancel.json',
  'baseline-researcher-operator-cancelled.json',
  // knowledge-research.test.ts: a session follow-up (memory, the collection decision, knowledge
  // search, the report indexed), its step with a knowledge_search call, a document's ingestion.
  'baseline-knowledge.json',
  'baseline-researcher-knowledge.json',
  'baseline-ingest-document.json',
  // gaps.test.ts, grounding.test.ts, long-report.test.ts: gap reflection adding a step; the claim
  // check; a deep run with a long report written by sections.
  'baseline-gaps.json',
  'baseline-claims.json',
  'baseline-long-report.json',
  // researcher-python.test.ts: the researcher's python tool in the sandbox.
  'baseline-researcher-python.json',
  // steering.test.ts: guidance, an edited and an added step; a wrap-up and its running step; a
  // banned domain; pages the user named, and the step that reads them.
  'baseline-steered.json',
  'baseline-wrapup.json',
  'baseline-researcher-wrapup.json',
  'baseline-ban.json',
  'baseline-mustread.json',
  'baseline-researcher-pages.json',
  // browser.test.ts: a step that crawls a page whose text JavaScript renders (the browser-render
  // patch: the page rendered on the browser queue, then read for the goal).
  'baseline-researcher-browser.json',
  // schedules.test.ts: a schedule's second run ("What changed since").
  'baseline-scheduled.json',
  // schedule-alerts.test.ts: a run of an on_change schedule whose report found a change (the
  // notify-on-change patch: the comparison decided its report_ready delivery).
  'baseline-notify-on-change.json',
  // user-memory.test.ts: a user's first run, whose learning step after the report (the
  // user-memory patch) taught two facts.
  'baseline-user-memory.json',
  // fairness.test.ts: a run of a tenant with TENANT_MAX_RUNS, and its tenant's admission queue.
  'baseline-admitted.json',
  'baseline-admission-queue.json',
  // webhooks.test.ts: a run with a webhook, and a delivery retried after a 500.
  'baseline-webhooks.json',
  'baseline-webhook-delivery.json',
  // supervisor.test.ts: supervisor mode, a thought and a second wave delegated, then the end (the
  // first history with the background-reads-pages patch: its background read pages).
  'baseline-supervisor.json',
  // rewrite.test.ts: a finished run's report rewritten (brief, German) by reportRewriteWorkflow.
  'baseline-rewrite.json',
  // researcher.test.ts: a step whose last turn wrote its findings (the compress-in-last-turn patch;
  // recorded before the tools-in-turn patch), and the same step whose turns ran their search and
  // page read themselves (the tools-in-turn patch).
  'baseline-researcher-compress.json',
  'baseline-researcher-tools-in-turn.json',
  // grounding.test.ts: a report and its claim check in one activity (the report-with-claim-check patch).
  'baseline-claims-in-report.json',
  // background-pages.test.ts: the background phase in one activity (the background-in-one patch).
  'baseline-background-in-one.json',
  // research.test.ts: a reviewed run and its step on the current code of then (the oldest of
  // patches.ts CURRENT_PATCHES, current-2026-11: one marker for the patches folded into it, and
  // the first plan written in the background's activity).
  'baseline-current.json',
  'baseline-researcher-current.json',
  // research.test.ts: the same run on the current patch after that (current-2026-11-28): its row
  // written after every change of its status view (row-keeps-view).
  'baseline-row-keeps-view.json',
  // research.test.ts: the same run on this code (patches.ts CURRENT_PATCH): the coordinator's
  // classification inside the background phase's activity (classify-in-background); and a direct
  // answer given by that activity.
  'baseline-classify-in-background.json',
  'baseline-direct-in-background.json',
];

describe('replay of recorded histories', () => {
  it('has exactly the baseline histories, each with its workflow id', () => {
    expect([...files].sort()).toEqual([...BASELINE].sort());
    expect(Object.keys(ids).sort()).toEqual([...BASELINE].sort());
  });

  it.each(files)('%s replays without nondeterminism', async (file) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { events: unknown[] };
    expect(history.events.length).toBeGreaterThan(10);
    expect(ids[file]).toBeTypeOf('string');
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, ids[file]);
  });
});
