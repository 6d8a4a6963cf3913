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

/** The chain with the time before each call (after the one before it ended), for --gaps. */
export function describeChain(path: CriticalPath<TimedCall & { rule?: string | undefined }>, t0: number): string {
  let end = t0;
  return path.chain
    .map((c) => {
      const line = `  +${String(Math.round(c.startedAt - end)).padStart(5)} ms then ${String(Math.round(c.endedAt! - c.startedAt)).padStart(5)} ms  ${c.rule ?? '?'}`;
      end = c.endedAt!;
      return line;
    })
    .join('\n');
}
