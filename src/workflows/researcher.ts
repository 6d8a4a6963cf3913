// The researcher child workflow: a ReAct loop written as workflow code. Each round is one LLM
// activity that may return tool calls. The turn runs its web_search and crawl calls itself before
// it returns; the workflow runs the other tools as activities (tools.ts) and feeds their results
// back through the stored conversation, at most maxToolRounds rounds. The turn that ends the step
// compresses the findings into a step result citing stable source ids, and has them judged.
import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import { knowledgeSignal, wrapUpSignal } from './messages';
import { ErrorType } from '../shared/errors';
import { addUsage, forcedAnswerCut, stepKey, ZERO_USAGE } from '../shared/plain';
import type { StepInput, StepOutput } from '../shared/schemas';
import type { McpToolSpec } from '../activities/mcp';
import type { ToolResultInput } from '../activities/roles/conversation';
import type { GoOn } from '../activities/roles/researcher';
import { activitiesFor, partsGiveUpAt, type Calls } from './proxies';
import { stepBudgetSpent } from '../shared/step-budget';
import { StepNotes } from './step-notes';
import { crawlPages, keepFromTurn, runTool, type KeepToolResult } from './tools';
import { watchStepWaits } from './waits';

/** After a context-length error, tool results kept whole: first the last one, then none. */
const TRIM_KEEP_LAST = [1, 0] as const;

/** A turn that may also write the step's findings and judge them (three model calls: the LLM
 *  proxy's 5 minutes is one), or run its searches and page reads (a minute a query, three minutes
 *  a page, in parallel). */
const TURN_AND_FINDINGS_TIMEOUT = '15 minutes';

/**
 * How long a turn may go on with web-only rounds by itself: it starts no round after this, and the
 * workflow's history hears of the step at least this often. Its activity's time: a round started
 * just before it (a model call, its searches and page reads, and the findings with their judge) on
 * top.
 */
const GO_ON_MS = 5 * 60_000;
const TURN_WITH_ROUNDS_TIMEOUT = '30 minutes';

/** Room left before the step's outage limit for a turn whose searches and page reads have stopped
 *  retrying an outage (its other calls, its return): so such an outage ends as a result the next
 *  turn reads, not as a failed step. */
const AFTER_TOOLS_MS = 2 * 60_000;

export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {
  watchStepWaits(input.step.id, input.step.title);
  const convKey = `${input.step.id}/${input.attempt}`;
  const maxRounds = input.maxToolRounds ?? 8;
  const notes = new StepNotes();
  const calls = activitiesFor(input);
  // MCP tools are discovered by the step's first turn, so a server added later serves later steps.
  let mcpTools: McpToolSpec[] = [];
  // Tool results ride along with the next turn instead of an activity each.
  let pending: ToolResultInput[] = [];
  const keep: KeepToolResult = (result) => void pending.push(result);
  // The user asked the run to wrap up: the next turn answers with what the step has.
  let wrapUp = false;
  setHandler(wrapUpSignal, () => void (wrapUp = true));
  // Collections the user added mid-run: knowledge_search covers them from the next round.
  setHandler(knowledgeSignal, (m) => void (input.knowledge = m.knowledge));
  let seq = 0;
  let usage = ZERO_USAGE;
  // Pages the user asked the run to read: read before the first turn, which is shown them.
  let userPages: ToolResultInput | undefined;
  if (input.mustRead?.length) {
    const read = await crawlPages(calls, input.researchId, input.mustRead, input.step.description);
    usage = addUsage(usage, read.usage);
    userPages = { researchId: input.researchId, convKey, seq: 2, toolCallId: 'user-pages', crawl: read.pages };
  }
  // Why the step answers before it is done, if it does (a wrap-up is the user's choice, not this).
  let cutShort: string | undefined;
  // The findings, written and judged by the turn that ended the step. A step cut short by a
  // wrap-up is accepted unjudged, so its last turn does not ask.
  let compressed: StepOutput | undefined;
  let trimFirst = false;
  for (let round = 0; round <= maxRounds; round++) {
    // Out of rounds, or out of the budget the run had left: answer with what there is.
    const budgetSpent = stepBudgetSpent(input.budget, usage, Date.now());
    const mustAnswer = round === maxRounds || wrapUp || budgetSpent;
    if (budgetSpent) cutShort ??= "its share of the run's budget was spent";
    // The round before asked for tools (or the loop would have ended): the model was not done.
    else if (round === maxRounds && !wrapUp)
      cutShort ??= `its tool rounds (maxToolRounds ${maxRounds}) ran out while the model still wanted tools`;
    // A turn that must answer is offered no tools, and no turn follows it: nothing to discover.
    const discoverMcp = round === 0 && !mustAnswer;
    const turn = await turnWithTrim(calls, input, convKey, {
      seq,
      round,
      mustAnswer,
      mcpTools,
      toolResults: pending,
      userPages,
      discoverMcp,
      trimFirst,
      // Web tools in the turn's activity: no activity task per query or page, no workflow task between.
      ...(!mustAnswer
        ? {
            webTools: { giveUpAt: partsGiveUpAt(input, AFTER_TOOLS_MS) },
            goOn: { round, maxRounds, ...(input.budget ? { budget: input.budget } : {}), spent: usage, forMs: GO_ON_MS },
          }
        : {}),
      compressAtEnd: { key: stepKey(input.step.id, input.attempt), ...(cutShort ? { cutShort } : {}), judge: !wrapUp },
    });
    if (turn.mcp) {
      mcpTools = turn.mcp.tools;
      for (const e of turn.mcp.errors) notes.add('MCP discovery', e);
    }
    // The turn itself had to answer: its conversation outgrew the context budget.
    if (turn.forcedAnswer && !mustAnswer) cutShort ??= forcedAnswerCut(turn.forcedAnswer);
    pending = [];
    userPages = undefined;
    trimFirst = false;
    usage = addUsage(usage, turn.usage);
    // The rounds the turn went on with by itself, before its last.
    const earlier = turn.earlier;
    if (earlier) {
      round += earlier.rounds;
      usage = addUsage(usage, earlier.usage);
      notes.addProviderErrors(earlier.providerErrors);
      for (const e of earlier.searchErrors) notes.add('web search', e);
    }
    seq = turn.nextSeq;
    compressed = turn.compressed;
    if (turn.calls.length === 0) break;
    const base = seq;
    seq += turn.calls.length;
    // Tools that call the model (page extraction) count against the budget too.
    const web = turn.web;
    if (web) {
      usage = addUsage(usage, web.usage);
      notes.addProviderErrors(web.providerErrors);
      for (const e of web.searchErrors) notes.add('web search', e);
    }
    const toolUsage = await Promise.all(
      turn.calls.map((call, i) => {
        const ran = web?.results.find((r) => r.seq === base + i);
        return ran ? keepFromTurn(calls, input.researchId, call, ran, keep) : runTool(calls, input, convKey, base + i, call, notes, keep);
      }),
    );
    for (const u of toolUsage) usage = addUsage(usage, u);
    // The turn's next round was refused for its length, after it wrote these results: the next
    // turn trims the conversation first, and writes nothing again.
    if (turn.contextFull) {
      pending = [];
      trimFirst = true;
    }
  }
  // The loop ends on a turn that asked no tools (the last round must answer), which wrote them.
  const out = compressed;
  if (!out) throw ApplicationFailure.nonRetryable(`researcher ${input.step.id}: the step's last turn wrote no findings`);
  const failures = notes.list();
  return { ...out, usage: addUsage(usage, out.usage), ...(failures.length ? { notes: failures } : {}), ...(cutShort ? { cutShort } : {}) };
}

/** One model turn; a context-length error shortens old tool results and asks again (twice at most). */
async function turnWithTrim(
  calls: Calls,
  input: StepInput,
  convKey: string,
  turn: {
    seq: number;
    round: number;
    mustAnswer: boolean;
    mcpTools: McpToolSpec[];
    toolResults: ToolResultInput[];
    userPages: ToolResultInput | undefined;
    discoverMcp: boolean;
    /** The conversation is known to be too long for the model: trim it before the first ask. */
    trimFirst: boolean;
    webTools?: { giveUpAt: number };
    compressAtEnd: { key: string; cutShort?: string; judge?: boolean };
    goOn?: GoOn;
  },
) {
  const turnInput = {
    researchId: input.researchId,
    convKey,
    seq: turn.seq,
    question: input.question,
    locale: input.locale,
    step: input.step,
    feedback: input.feedback,
    dependencyKeys: input.dependencyKeys,
    mustAnswer: turn.mustAnswer,
    mcpTools: turn.mcpTools,
    ...(input.knowledge ? { knowledge: true } : {}),
    python: true,
    ...(turn.userPages ? { userPages: turn.userPages } : {}),
    ...(turn.discoverMcp ? { discoverMcp: true } : {}),
    ...(turn.webTools ? { webTools: turn.webTools } : {}),
    compressAtEnd: turn.compressAtEnd,
    ...(turn.goOn ? { goOn: turn.goOn } : {}),
  };
  const summary = `researcher ${input.step.id}: round ${turn.round + 1}${turn.mustAnswer ? ' (must answer)' : ''}${turn.goOn ? ' and its web rounds' : ''}`;
  // A turn may end the step and write its findings too: room for all of it; one that may go on
  // with rounds, room for them.
  const options = { summary, startToCloseTimeout: turn.goOn ? TURN_WITH_ROUNDS_TIMEOUT : TURN_AND_FINDINGS_TIMEOUT };
  const trimConversation = (trim: number) =>
    calls.store.trimConversation.executeWithOptions({ summary: `researcher ${input.step.id}: trim context` }, [
      { researchId: input.researchId, convKey, keepLast: TRIM_KEEP_LAST[trim]! },
    ]);
  if (turn.trimFirst) await trimConversation(0);
  for (let trim = turn.trimFirst ? 1 : 0; ; trim++) {
    try {
      // The tool results were written by the first try (a context-length error comes from the
      // model, after the writes): later tries must not undo the trimming.
      const results = trim === 0 && turn.toolResults.length ? { toolResults: turn.toolResults } : {};
      return await calls.llm.researcherTurn.executeWithOptions(options, [{ ...turnInput, ...results }]);
    } catch (err) {
      const type = (err as { cause?: { type?: string } }).cause?.type;
      if (type !== ErrorType.LlmContextLength || trim >= TRIM_KEEP_LAST.length) throw err;
      await trimConversation(trim);
    }
  }
}
