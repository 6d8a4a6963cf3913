// The LLM critical path of a run, measured from the scripted server's request log rather than
// assumed: the longest chain of calls in which each starts after the one before it ended, weighed
// by the calls' own durations. Wall time ÷ this path is what orchestration (Temporal round trips,
// activities, PostgreSQL, search, sandbox) adds on top of waiting for the model.

export interface TimedCall {
  startedAt: number;
  endedAt?: number | undefined;
}

export interface CriticalPath {
  ms: number;
  /** Calls on the chain. */
  calls: number;
}

export function llmCriticalPath(requests: TimedCall[]): CriticalPath {
  const calls = requests
    .filter((r): r is Required<TimedCall> => r.endedAt !== undefined)
    .sort((a, b) => a.startedAt - b.startedAt || a.endedAt - b.endedAt);
  const best: CriticalPath[] = [];
  let top: CriticalPath = { ms: 0, calls: 0 };
  calls.forEach((c, i) => {
    let before: CriticalPath = { ms: 0, calls: 0 };
    for (let j = 0; j < i; j++) if (calls[j]!.endedAt <= c.startedAt && best[j]!.ms > before.ms) before = best[j]!;
    best[i] = { ms: before.ms + (c.endedAt - c.startedAt), calls: before.calls + 1 };
    if (best[i]!.ms > top.ms) top = best[i]!;
  });
  return top;
}
