// Child workflows for plan steps: the ReAct researcher and the sandboxed coder. Their earlier
// forms (search-and-summarise, LLM-only analysis) stay behind patched() for recorded histories.
import { ApplicationFailure, isCancellation, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { StepOutput } from '../activities/research';
import type { SandboxResult } from '../activities/sandbox';
import { SANDBOX_QUEUE_SUFFIX, SEARCH_QUEUE_SUFFIX } from '../shared/constants';
import { failureMessage } from '../shared/errors';
import { addUsage, ZERO_USAGE, type PlanStep, type ToolCall } from '../shared/schemas';
import { CRAWL_OPTIONS, LLM_OPTIONS, MCP_OPTIONS, SANDBOX_OPTIONS, SEARCH_OPTIONS, STORE_OPTIONS } from './activity-options';

const { webSearch } = proxyActivities<Activities>(SEARCH_OPTIONS);
const { crawlPage } = proxyActivities<Activities>(CRAWL_OPTIONS);
const store = proxyActivities<Activities>(STORE_OPTIONS);
const mcp = proxyActivities<Activities>(MCP_OPTIONS);
const { runCode } = proxyActivities<Activities>(SANDBOX_OPTIONS);
const { summarizeStep, analyzeStep, researcherTurn, compressResearch, writeCode, finishCoderStep } = proxyActivities<Activities>(LLM_OPTIONS);

export interface StepInput {
  researchId: string;
  question: string;
  locale: string;
  step: PlanStep;
  attempt: number;
  /** Reflection feedback on the previous attempt; empty on the first. */
  feedback: string;
  /** Document keys of the accepted results of the steps this one depends on. */
  dependencyKeys: string[];
  /** Rounds of tool use before the researcher must answer. */
  maxToolRounds?: number;
  /** Programs the coder may write for one attempt of the step (each fix sees the last error). */
  maxCodeAttempts?: number;
}

/** After a context-length error, tool results kept whole: first the last one, then none. */
const TRIM_KEEP_LAST = [1, 0];

/** The rate-limited queue search activities run on, beside this workflow's own queue. */
export function searchQueue(): string {
  return `${workflowInfo().taskQueue}${SEARCH_QUEUE_SUFFIX}`;
}

export function stepKey(stepId: string, attempt: number): string {
  return `step/${stepId}/${attempt}`;
}

export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {
  if (!patched('react-researcher')) return legacyResearcher(input);
  const convKey = `${input.step.id}/${input.attempt}`;
  const maxRounds = input.maxToolRounds ?? 8;
  // MCP tools are discovered when the step starts, so a server added later serves later steps.
  const mcpTools = patched('mcp-tools')
    ? (await mcp.discoverMcpTools.executeWithOptions({ summary: `researcher ${input.step.id}: discover MCP tools` }, [{ role: 'researcher' }])).tools
    : [];
  let seq = 0;
  let usage = ZERO_USAGE;
  const add = (u: typeof usage) => {
    usage = addUsage(usage, u);
  };
  for (let round = 0; round <= maxRounds; round++) {
    const turnInput = { researchId: input.researchId, convKey, seq, question: input.question, locale: input.locale, step: input.step, feedback: input.feedback, dependencyKeys: input.dependencyKeys, mustAnswer: round === maxRounds, mcpTools };
    let turn;
    for (let trim = 0; ; trim++) {
      try {
        turn = await researcherTurn.executeWithOptions({ summary: `researcher ${input.step.id}: round ${round + 1}${turnInput.mustAnswer ? ' (must answer)' : ''}` }, [turnInput]);
        break;
      } catch (err) {
        // A context-length error: shorten old tool results and ask again (twice at most).
        const type = (err as { cause?: { type?: string } }).cause?.type;
        if (type !== 'LlmContextLength' || trim >= TRIM_KEEP_LAST.length) throw err;
        await store.trimConversation.executeWithOptions({ summary: `researcher ${input.step.id}: trim context` }, [{ researchId: input.researchId, convKey, keepLast: TRIM_KEEP_LAST[trim]! }]);
      }
    }
    add(turn.usage);
    seq = turn.nextSeq;
    if (turn.calls.length === 0) break;
    const base = seq;
    seq += turn.calls.length;
    await Promise.all(turn.calls.map((call, i) => runTool(input, convKey, base + i, call)));
  }
  const out = await compressResearch.executeWithOptions({ summary: `researcher ${input.step.id}: compress findings` }, [
    { researchId: input.researchId, convKey, key: stepKey(input.step.id, input.attempt), question: input.question, locale: input.locale, step: input.step },
  ]);
  add(out.usage);
  return { ...out, usage };
}

async function runTool(input: StepInput, convKey: string, seq: number, call: ToolCall): Promise<void> {
  const common = { researchId: input.researchId, convKey, seq, toolCallId: call.id };
  switch (call.name) {
    case 'web_search': {
      const results = await Promise.allSettled(
        call.args.queries.map((query) => webSearch.executeWithOptions({ summary: `search: ${query.slice(0, 80)}`, taskQueue: searchQueue() }, [{ researchId: input.researchId, query }])),
      );
      const search = results.map((r, i) =>
        r.status === 'fulfilled' ? { query: call.args.queries[i]!, sourceIds: r.value.results.map((x) => x.sourceId) } : { query: call.args.queries[i]!, sourceIds: [], error: failureMessage(r.reason) },
      );
      await store.appendToolResult.executeWithOptions({ summary: `tool result: web_search (${search.length} queries)` }, [{ ...common, search }]);
      return;
    }
    case 'crawl': {
      const results = await Promise.allSettled(
        call.args.urls.map((url) => crawlPage.executeWithOptions({ summary: `crawl: ${url.slice(0, 100)}` }, [{ researchId: input.researchId, url, goal: call.args.goal }])),
      );
      const crawl = results.map((r, i) => (r.status === 'fulfilled' ? r.value : { url: call.args.urls[i]!, status: 'failed' as const, reason: failureMessage(r.reason) }));
      await store.appendToolResult.executeWithOptions({ summary: `tool result: crawl (${crawl.length} pages)` }, [{ ...common, crawl }]);
      return;
    }
    case 'knowledge_search': {
      const r = await store.knowledgeSearch.executeWithOptions({ summary: 'knowledge search' }, [{ researchId: input.researchId, query: call.args.query }]);
      await store.appendToolResult.executeWithOptions({ summary: 'tool result: knowledge_search' }, [{ ...common, text: r.text }]);
      return;
    }
    case 'mcp': {
      try {
        await mcp.callMcpTool.executeWithOptions({ summary: `mcp: ${call.server}.${call.tool}` }, [{ ...common, server: call.server, tool: call.tool, args: call.args }]);
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The model must hear that the tool failed, or the conversation has a call with no answer.
        await store.appendToolResult.executeWithOptions({ summary: `tool result: ${call.server}.${call.tool} failed` }, [{ ...common, text: `Tool ${call.server}.${call.tool} failed: ${failureMessage(err)}` }]);
      }
      return;
    }
    default:
      throw ApplicationFailure.nonRetryable(`tool ${(call as { name: string }).name} is not available to this researcher`, 'UnknownTool');
  }
}

/** The search-and-summarise researcher that runs recorded before the ReAct loop still replay. */
async function legacyResearcher(input: StepInput): Promise<StepOutput> {
  const queries = input.step.needSearch ? [input.step.title, input.step.description.slice(0, 120)] : [];
  const settled = await Promise.allSettled(
    queries.map((query) => webSearch.executeWithOptions({ summary: `search: ${query.slice(0, 80)}`, taskQueue: searchQueue() }, [{ researchId: input.researchId, query }])),
  );
  const sourceIds: string[] = [];
  const searchErrors: string[] = [];
  for (const r of settled) {
    if (r.status === 'fulfilled') {
      for (const s of r.value.results) if (!sourceIds.includes(s.sourceId)) sourceIds.push(s.sourceId);
    } else {
      searchErrors.push(failureMessage(r.reason));
    }
  }
  return summarizeStep.executeWithOptions({ summary: `researcher: findings for ${input.step.id} (attempt ${input.attempt})` }, [
    {
      researchId: input.researchId,
      key: stepKey(input.step.id, input.attempt),
      question: input.question,
      locale: input.locale,
      step: input.step,
      sourceIds,
      dependencyKeys: input.dependencyKeys,
      feedback: input.feedback,
      searchErrors,
    },
  ]);
}

export async function coderWorkflow(input: StepInput): Promise<StepOutput> {
  if (!patched('sandbox-coder')) return legacyAnalyst(input);
  const maxAttempts = input.maxCodeAttempts ?? 3;
  let usage = ZERO_USAGE;
  const add = (u: typeof usage) => {
    usage = addUsage(usage, u);
  };
  let previous: { code: string; status: SandboxResult['status']; message: string; stderr: string } | undefined;
  let draft!: { code: string; explanation: string; files: { name: string; content: string }[] };
  let run!: SandboxResult;
  let attempt = 1;
  for (; attempt <= maxAttempts; attempt++) {
    const written = await writeCode.executeWithOptions({ summary: `coder ${input.step.id}: program ${attempt}${previous ? ' (fix)' : ''}` }, [
      { researchId: input.researchId, question: input.question, locale: input.locale, step: input.step, dependencyKeys: input.dependencyKeys, feedback: input.feedback, ...(previous ? { previous } : {}) },
    ]);
    add(written.usage);
    draft = written;
    run = await runCode.executeWithOptions({ summary: `sandbox ${input.step.id}: program ${attempt}`, taskQueue: `${workflowInfo().taskQueue}${SANDBOX_QUEUE_SUFFIX}` }, [
      { researchId: input.researchId, stepId: input.step.id, attempt: input.attempt * 100 + attempt, code: written.code, files: written.files },
    ]);
    if (run.status === 'ok') break;
    previous = { code: written.code, status: run.status, message: run.message, stderr: run.stderr };
  }
  const out = await finishCoderStep.executeWithOptions({ summary: `coder ${input.step.id}: findings (${run.status})` }, [
    {
      researchId: input.researchId,
      key: stepKey(input.step.id, input.attempt),
      question: input.question,
      locale: input.locale,
      step: input.step,
      dependencyKeys: input.dependencyKeys,
      code: draft.code,
      explanation: draft.explanation,
      run,
      attempts: Math.min(attempt, maxAttempts),
    },
  ]);
  add(out.usage);
  return { ...out, usage };
}

/** The LLM-only analyst that ran before the sandbox; kept so recorded histories still replay. */
async function legacyAnalyst(input: StepInput): Promise<StepOutput> {
  return analyzeStep.executeWithOptions({ summary: `coder: analysis for ${input.step.id} (attempt ${input.attempt})` }, [
    {
      researchId: input.researchId,
      key: stepKey(input.step.id, input.attempt),
      question: input.question,
      locale: input.locale,
      step: input.step,
      dependencyKeys: input.dependencyKeys,
      feedback: input.feedback,
    },
  ]);
}
