// One model turn of a researcher step (the researcherTurn activity): its input from the step's and
// the round's, room for what it may do, and after a context-length error the conversation's old
// tool results shortened and the turn asked again.
import { ErrorType } from '../shared/errors';
import { THINK_MIN_TOOL_ROUNDS } from '../shared/plain';
import type { StepInput } from '../shared/schemas';
import type { McpToolSpec } from '../activities/mcp';
import type { ToolResultInput } from '../activities/role-kit/conversation';
import type { GoOn, TurnResult } from '../activities/phases/researcher-turn';
import type { Calls } from './proxies';

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
export const GO_ON_MS = 5 * 60_000;
const TURN_WITH_ROUNDS_TIMEOUT = '30 minutes';

/** What a round asks of its turn. */
export interface TurnRequest {
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
}

/** One model turn; a context-length error shortens old tool results and asks again (twice at most). */
export async function turnWithTrim(calls: Calls, input: StepInput, convKey: string, turn: TurnRequest): Promise<TurnResult> {
  const turnInput = turnInputOf(input, convKey, turn);
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

/** The activity's input: the step's, and the round's (read once, before the first try). */
function turnInputOf(input: StepInput, convKey: string, turn: TurnRequest) {
  return {
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
    ...((input.maxToolRounds ?? 8) >= THINK_MIN_TOOL_ROUNDS ? { think: true } : {}),
    ...(turn.userPages ? { userPages: turn.userPages } : {}),
    ...(turn.discoverMcp ? { discoverMcp: true } : {}),
    ...(turn.webTools ? { webTools: turn.webTools } : {}),
    compressAtEnd: turn.compressAtEnd,
    ...(turn.goOn ? { goOn: turn.goOn } : {}),
  };
}
