// The researcher's ReAct loop: each round one model turn (researcher-turn.ts), then the tool calls
// it asked for (tools.ts), whose results ride along with the next turn; at most maxToolRounds
// rounds after the first, the last of which must answer. The loop's state lives here, changed
// only by the loop's own methods.
import { ApplicationFailure } from '@temporalio/workflow';
import { addUsage, forcedAnswerCut, stepKey, ZERO_USAGE } from '../shared/plain';
import type { StepInput, StepOutput, Usage } from '../shared/schemas';
import { stepBudgetSpent } from '../shared/step-budget';
import type { McpToolSpec } from '../activities/mcp';
import type { ToolResultInput } from '../activities/role-kit/conversation';
import type { TurnResult } from '../activities/phases/researcher-turn';
import { partsGiveUpAt, type Calls } from './proxies';
import { GO_ON_MS, turnWithTrim, type TurnRequest } from './researcher-turn';
import { StepNotes } from './step-notes';
import { crawlPages, keepFromTurn, runTool, type KeepToolResult } from './tools';

/** Room left before the step's outage limit for a turn whose searches and page reads have stopped
 *  retrying an outage (its other calls, its return): so such an outage ends as a result the next
 *  turn reads, not as a failed step. */
const AFTER_TOOLS_MS = 2 * 60_000;

export class ResearcherRounds {
  private readonly convKey: string;
  private readonly maxRounds: number;
  private readonly notes = new StepNotes();
  // MCP tools are discovered by the step's first turn, so a server added later serves later steps.
  private mcpTools: McpToolSpec[] = [];
  // Tool results ride along with the next turn instead of an activity each.
  private pending: ToolResultInput[] = [];
  private readonly keep: KeepToolResult = (result) => void this.pending.push(result);
  // The user asked the run to wrap up: the next turn answers with what the step has.
  private wrappingUp = false;
  private seq = 0;
  private usage = ZERO_USAGE;
  // Pages the user asked the run to read: read before the first turn, which is shown them.
  private userPages: ToolResultInput | undefined;
  // Why the step answers before it is done, if it does (a wrap-up is the user's choice, not this).
  private cutShort: string | undefined;
  // The findings, written and judged by the turn that ended the step. A step cut short by a
  // wrap-up is accepted unjudged, so its last turn does not ask.
  private compressed: StepOutput | undefined;
  private trimFirst = false;

  constructor(
    private readonly calls: Calls,
    private readonly input: StepInput,
  ) {
    this.convKey = `${input.step.id}/${input.attempt}`;
    this.maxRounds = input.maxToolRounds ?? 8;
  }

  wrapUp(): void {
    this.wrappingUp = true;
  }

  /** The pages the user asked the run to read, read for the first turn. */
  async readUserPages(): Promise<void> {
    const { calls, input } = this;
    if (!input.mustRead?.length) return;
    const read = await crawlPages(calls, input.researchId, input.mustRead, input.step.description);
    this.usage = addUsage(this.usage, read.usage);
    this.userPages = { researchId: input.researchId, convKey: this.convKey, seq: 2, toolCallId: 'user-pages', crawl: read.pages };
  }

  /** The loop: a turn, then its tools, until a turn asks for none. */
  async run(): Promise<void> {
    for (let round = 0; round <= this.maxRounds; round++) {
      const mustAnswer = this.mustAnswer(round);
      const turn = await turnWithTrim(this.calls, this.input, this.convKey, this.request(round, mustAnswer));
      round += this.take(turn, mustAnswer);
      if (turn.calls.length === 0) break;
      await this.runTools(turn);
    }
  }

  /** The step's findings, with what the step spent, the failures it worked around and why it was cut short. */
  output(): StepOutput {
    // The loop ends on a turn that asked no tools (the last round must answer), which wrote them.
    const out = this.compressed;
    if (!out) throw ApplicationFailure.nonRetryable(`researcher ${this.input.step.id}: the step's last turn wrote no findings`);
    const failures = this.notes.list();
    const cutShort = this.cutShort;
    return {
      ...out,
      usage: addUsage(this.usage, out.usage),
      ...(failures.length ? { notes: failures } : {}),
      ...(cutShort ? { cutShort } : {}),
    };
  }

  /** Out of rounds, or out of the budget the run had left: the round's turn answers with what there is. */
  private mustAnswer(round: number): boolean {
    const maxRounds = this.maxRounds;
    const budgetSpent = stepBudgetSpent(this.input.budget, this.usage, Date.now());
    const mustAnswer = round === maxRounds || this.wrappingUp || budgetSpent;
    if (budgetSpent) this.cutShort ??= "its share of the run's budget was spent";
    // The round before asked for tools (or the loop would have ended): the model was not done.
    else if (round === maxRounds && !this.wrappingUp)
      this.cutShort ??= `its tool rounds (maxToolRounds ${maxRounds}) ran out while the model still wanted tools`;
    return mustAnswer;
  }

  private request(round: number, mustAnswer: boolean): TurnRequest {
    const { input, maxRounds, cutShort } = this;
    return {
      seq: this.seq,
      round,
      mustAnswer,
      mcpTools: this.mcpTools,
      toolResults: this.pending,
      userPages: this.userPages,
      // A turn that must answer is offered no tools, and no turn follows it: nothing to discover.
      discoverMcp: round === 0 && !mustAnswer,
      trimFirst: this.trimFirst,
      // Web tools in the turn's activity: no activity task per query or page, no workflow task between.
      ...(!mustAnswer
        ? {
            webTools: { giveUpAt: partsGiveUpAt(input, AFTER_TOOLS_MS) },
            goOn: { round, maxRounds, ...(input.budget ? { budget: input.budget } : {}), spent: this.usage, forMs: GO_ON_MS },
          }
        : {}),
      compressAtEnd: { key: stepKey(input.step.id, input.attempt), ...(cutShort ? { cutShort } : {}), judge: !this.wrappingUp },
    };
  }

  /** The turn's answer taken in; returns the rounds it went on with by itself, before its last. */
  private take(turn: TurnResult, mustAnswer: boolean): number {
    if (turn.mcp) {
      this.mcpTools = turn.mcp.tools;
      for (const e of turn.mcp.errors) this.notes.add('MCP discovery', e);
    }
    // The turn itself had to answer: its conversation outgrew the context budget.
    if (turn.forcedAnswer && !mustAnswer) this.cutShort ??= forcedAnswerCut(turn.forcedAnswer);
    this.pending = [];
    this.userPages = undefined;
    this.trimFirst = false;
    this.usage = addUsage(this.usage, turn.usage);
    if (turn.earlier) this.addWebWork(turn.earlier);
    this.seq = turn.nextSeq;
    this.compressed = turn.compressed;
    return turn.earlier?.rounds ?? 0;
  }

  /** The tool calls of a turn: those it ran kept (their pages that need a browser read first), the others run. */
  private async runTools(turn: TurnResult): Promise<void> {
    const { calls, input, convKey, notes, keep } = this;
    const base = this.seq;
    this.seq += turn.calls.length;
    // Tools that call the model (page extraction) count against the budget too.
    const web = turn.web;
    if (web) this.addWebWork(web);
    const toolUsage = await Promise.all(
      turn.calls.map((call, i) => {
        const ran = web?.results.find((r) => r.seq === base + i);
        return ran ? keepFromTurn(calls, input.researchId, call, ran, keep) : runTool(calls, input, convKey, base + i, call, notes, keep);
      }),
    );
    for (const u of toolUsage) this.usage = addUsage(this.usage, u);
    // The turn's next round was refused for its length, after it wrote these results: the next
    // turn trims the conversation first, and writes nothing again.
    if (turn.contextFull) {
      this.pending = [];
      this.trimFirst = true;
    }
  }

  /** What web searches and page reads spent and left to note: in a turn's rounds before its last, or in its last. */
  private addWebWork(web: { usage: Usage; providerErrors: string[]; searchErrors: string[] }): void {
    this.usage = addUsage(this.usage, web.usage);
    this.notes.addProviderErrors(web.providerErrors);
    for (const e of web.searchErrors) this.notes.add('web search', e);
  }
}
