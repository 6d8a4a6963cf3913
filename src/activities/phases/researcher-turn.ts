// The researcher-turn activity: one turn of the ReAct loop the workflow runs
// (src/workflows/researcher.ts), by the researcher role's call, and around it what the turn may
// do in the same activity: the web_search and crawl calls its reply asks for (researcher-web.ts),
// the rounds after it while they need only web tools (goOn), and at the step's end the findings
// (the compressor role) and their verdict (the judge role).
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { type StepOutput, type Usage } from '../../shared/schemas';
import { addUsage, forcedAnswerCut, ZERO_USAGE } from '../../shared/plain';
import { stepBudgetSpent, type StepBudget } from '../../shared/step-budget';
import { withinCall } from '../attempt';
import { compressResearch } from '../roles/compressor';
import { judgeStep } from '../roles/judge';
import { offeredTools, oneTurn, type ResearcherDeps, type TurnCall, type TurnCallResult } from '../roles/researcher';
import { runsInTurn, runWebTools, type WebToolsInTurn, type WebToolsResult } from './researcher-web';

export interface TurnInput extends TurnCall {
  /** A turn that asks no tools ends the step: it writes the step's findings too, in the same
   *  activity, and with `judge` has them judged there as well. The findings' document key, and why
   *  the step answers early when the workflow knows before the turn. */
  compressAtEnd?: { key: string; cutShort?: string; judge?: boolean };
  /** The turn runs the web_search and crawl calls its model asks for, before it returns
   *  (researcher-web.ts); the workflow runs the other tools. Absent: the workflow runs them all. */
  webTools?: WebToolsInTurn;
  /** With webTools: the turn goes on with the next rounds itself while they need only web tools.
   *  Absent: one round. */
  goOn?: GoOn;
}

/** What a turn that goes on with rounds by itself must respect, as the workflow's loop would. */
export interface GoOn {
  /** This turn's round (0 for the step's first), and the step's maxToolRounds: round maxRounds
   *  must answer, so the workflow asks it. */
  round: number;
  maxRounds: number;
  /** The step's budget, and what the step had spent before this turn. */
  budget?: StepBudget | undefined;
  spent: Usage;
  /** How long after the attempt starts a further round may still start here (ms): counted from
   *  the attempt, not from the schedule, so a turn that waited for a model slot still goes on. */
  forMs: number;
}

/** The rounds a turn went on with before its last (GoOn): their count, model usage (the pages'
 *  extractions included) and what their web tools left to note. */
export interface EarlierRounds {
  rounds: number;
  usage: Usage;
  providerErrors: string[];
  searchErrors: string[];
}

export interface TurnResult extends TurnCallResult {
  /** The step's findings, when the turn ended the step and was asked to write them (compressAtEnd). */
  compressed?: StepOutput;
  /** The web_search and crawl calls the turn ran (webTools): their results, notes and usage. */
  web?: WebToolsResult;
  /** The rounds before the last one, when the turn went on by itself (goOn); the fields above are
   *  the last round's (mcp the first's). */
  earlier?: EarlierRounds;
  /** The round after the last one was refused for the model's context length, after it wrote the
   *  last one's tool results (`web`) into the conversation: the workflow trims the conversation
   *  and asks that round again without writing them. */
  contextFull?: true;
}

export function createResearcherActivities(deps: ResearcherDeps) {
  return { researcherTurn: (input: TurnInput) => researcherTurn(deps, input) };
}

/**
 * The turn, and with `goOn` the rounds after it that it may do by itself: while each round asks
 * only for web tools, which it ran, and none of them left a page for the browser, the next round
 * is asked here, with those results written as the next turn would write them. The workflow gets
 * one activity task and one workflow task for the rounds instead of one each. Each further round
 * runs inside withinCall (`round-<n>`), so a retried attempt finds every round's stored reply and
 * its tools' model answers and pays for none again.
 */
async function researcherTurn(deps: ResearcherDeps, turnInput: TurnInput): Promise<TurnResult> {
  const goOn = turnInput.goOn;
  let input = turnInput;
  const until = Date.now() + (goOn?.forMs ?? 0);
  let turn = await oneRound(deps, input);
  if (!goOn) return turn;
  const first = turn;
  const earlier: EarlierRounds = { rounds: 0, usage: ZERO_USAGE, providerErrors: [], searchErrors: [] };
  let contextFull = false;
  for (;;) {
    const next = await nextRound(deps, input, turn, { ...goOn, until }, earlier.rounds, addUsage(earlier.usage, turn.usage));
    if (!next) break;
    let following: TurnResult;
    try {
      following = await withinCall(`round-${earlier.rounds + 1}`, () => oneRound(deps, next));
    } catch (err) {
      // The conversation outgrew the model's window, with the round's tool results written: the
      // workflow trims it and asks this round again (contextFull), as after a turn of its own.
      if (!(err instanceof ApplicationFailure && err.type === ErrorType.LlmContextLength)) throw err;
      contextFull = true;
      break;
    }
    const web = turn.web!;
    earlier.rounds++;
    earlier.usage = [earlier.usage, turn.usage, web.usage].reduce(addUsage);
    earlier.providerErrors.push(...web.providerErrors);
    earlier.searchErrors.push(...web.searchErrors);
    input = next;
    turn = following;
  }
  if (!earlier.rounds && !contextFull) return turn;
  const { mcp } = first;
  return { ...turn, ...(mcp ? { mcp } : {}), ...(earlier.rounds ? { earlier } : {}), ...(contextFull ? { contextFull } : {}) };
}

/**
 * The next round's input when the turn may ask it itself, or undefined: the workflow takes over
 * (the round wants a tool of the workflow's, a page the browser must render, or nothing more; the
 * next round is the last, which must answer; the step's budget is spent; the user asked the run to
 * wrap up; or the turn has gone on long enough, and the workflow's history should hear of it).
 */
async function nextRound(
  deps: ResearcherDeps,
  input: TurnInput,
  turn: TurnResult,
  goOn: GoOn & { until: number },
  roundsSoFar: number,
  spentHere: Usage,
): Promise<TurnInput | undefined> {
  const web = turn.web;
  if (!web || !turn.calls.length || !turn.calls.every(runsInTurn)) return undefined;
  if (web.results.some((r) => r.crawl?.some((p) => p.needsBrowser))) return undefined;
  const round = goOn.round + roundsSoFar + 1;
  if (round >= goOn.maxRounds || Date.now() >= goOn.until) return undefined;
  const spent = [goOn.spent, spentHere, web.usage].reduce(addUsage);
  if (stepBudgetSpent(goOn.budget, spent, Date.now())) return undefined;
  if (await deps.store.events.steered(input.researchId, 'wrapUp')) return undefined;
  const { discoverMcp: _first, userPages: _firstToo, ...rest } = input;
  return { ...rest, seq: turn.nextSeq + turn.calls.length, mcpTools: turn.mcp?.tools ?? input.mcpTools ?? [], toolResults: web.results };
}

async function oneRound(deps: ResearcherDeps, turnInput: TurnInput): Promise<TurnResult> {
  const turn = await oneTurn(deps, turnInput);
  if (turn.calls.length) return withWebTools(deps, turnInput, turn);
  const end = turnInput.compressAtEnd;
  if (!end) return turn;
  const forced = turn.forcedAnswer && !turnInput.mustAnswer ? forcedAnswerCut(turn.forcedAnswer) : undefined;
  const cutShort = end.cutShort ?? forced;
  const { researchId, convKey, question, locale, step } = turnInput;
  // The findings are asked at the end of the conversation, with the tools it was offered.
  const tools = await offeredTools(deps, turnInput);
  const input = { researchId, convKey, key: end.key, question, locale, step, tools, ...(cutShort ? { cutShort } : {}) };
  const compressed = await compressResearch(deps, input, 'compress');
  if (!end.judge) return { ...turn, compressed };
  const judged = await judgeStep(deps, { researchId, key: end.key, step, question }, 'judge');
  return { ...turn, compressed: { ...compressed, usage: addUsage(compressed.usage, judged.usage), verdict: judged.verdict } };
}

/**
 * The turn's web_search and crawl calls, run here when the workflow asks (webTools) and the worker
 * can search. A retry of a turn whose reply was stored runs them again from that reply, finding
 * the model answers its tools' earlier attempt paid for.
 */
async function withWebTools(deps: ResearcherDeps, input: TurnInput, turn: TurnResult): Promise<TurnResult> {
  if (!input.webTools || !deps.web || !turn.calls.some(runsInTurn)) return turn;
  const conversation = { researchId: input.researchId, convKey: input.convKey, nextSeq: turn.nextSeq, goal: input.step.description };
  return { ...turn, web: await runWebTools(deps.web, conversation, turn.calls, input.webTools) };
}
