// The LLM critical path of a run, measured from the scripted server's request log rather than
// assumed: the longest chain of calls in which each starts after the one before it ended, weighed
// by the calls' own durations. Wall time ÷ this path is what orchestration (Temporal round trips,
// activities, PostgreSQL, search, sandbox) adds on top of waiting for the model.

export interface TimedCall {
  startedAt: number;
  endedAt?: number | undefined;
}

export interface CriticalPath<T extends TimedCall = TimedCall> {
  ms: number;
  /** Calls on the chain. */
  calls: number;
  /** The chain itself, first call first. */
  chain: T[];
}

export function llmCriticalPath<T extends TimedCall>(requests: T[]): CriticalPath<T> {
  const calls = requests
    .filter((r): r is T & Required<TimedCall> => r.endedAt !== undefined)
    .sort((a, b) => a.startedAt - b.startedAt || a.endedAt - b.endedAt);
  const best: { ms: number; calls: number; prev: number }[] = [];
  let top = -1;
  calls.forEach((c, i) => {
    let prev = -1;
    for (let j = 0; j < i; j++) if (calls[j]!.endedAt <= c.startedAt && (prev < 0 || best[j]!.ms > best[prev]!.ms)) prev = j;
    const before = prev < 0 ? { ms: 0, calls: 0 } : best[prev]!;
    best[i] = { ms: before.ms + (c.endedAt - c.startedAt), calls: before.calls + 1, prev };
    if (top < 0 || best[i]!.ms > best[top]!.ms) top = i;
  });
  const chain: T[] = [];
  for (let i = top; i >= 0; i = best[i]!.prev) chain.unshift(calls[i]!);
  return top < 0 ? { ms: 0, calls: 0, chain } : { ms: best[top]!.ms, calls: best[top]!.calls, chain };
}

/** An activity's times from a history (ms since the epoch), to place a model call inside it. */
export interface ActivitySpan {
  type: string;
  scheduledAt: number;
  startedAt: number;
  completedAt: number;
}

/** The chain with the time before each call (after the one before it ended), for --gaps. With the
 *  run's activities, each wait is split into: the previous call's activity after its answer came
 *  (tail), Temporal's part between that activity's completion and this one's start (workflow
 *  tasks, dispatch, other activities in between), and this activity before it sent the request
 *  (head). */
export function describeChain(
  path: CriticalPath<TimedCall & { rule?: string | undefined }>,
  t0: number,
  activities: ActivitySpan[] = [],
): string {
  const around = (c: TimedCall) =>
    activities
      .filter((a) => a.startedAt <= c.startedAt && a.completedAt >= c.endedAt!)
      .sort((a, b) => a.completedAt - a.startedAt - (b.completedAt - b.startedAt))[0];
  let end = t0;
  let prevActivity: ActivitySpan | undefined;
  let prevEnd: number | undefined;
  return path.chain
    .map((c) => {
      const act = around(c);
      let parts = '';
      if (act && prevActivity && prevEnd !== undefined) {
        const tail = prevActivity.completedAt - prevEnd;
        const between = act.startedAt - prevActivity.completedAt;
        const head = c.startedAt - act.startedAt;
        parts = ` (tail ${tail}, between ${between}, head ${head})`;
      }
      const line = `  +${String(Math.round(c.startedAt - end)).padStart(5)} ms then ${String(Math.round(c.endedAt! - c.startedAt)).padStart(5)} ms  ${(c.rule ?? '?').padEnd(12)}${act ? ` ${act.type}` : ''}${parts}`;
      end = c.endedAt!;
      prevActivity = act;
      prevEnd = c.endedAt;
      return line;
    })
    .join('\n');
}
