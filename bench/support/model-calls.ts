// The model calls of a load, from the fake model's request log: calls and tokens per run by role
// (the fake's rule name is the role), the share of prompt characters a prefix cache could reuse,
// and how busy the model slots were.
import type { LoggedRequest } from '../../test/support/llm-server';
import { conversationsOf, firstRequestShare, prefixReuse, renderPrompt, reuseShare, worstDivergence } from './prompt-reuse';

export interface RoleTokens {
  calls: number;
  prompt: number;
  completion: number;
  /** The share of the role's prompt text a prefix cache could reuse from earlier requests of its
   *  run (of the load when runs overlapped, which cannot tell runs apart). */
  reuse?: number;
}

export interface ModelCallFigures {
  callsPerRun: number;
  /** Per run, by role. */
  byRole: Record<string, RoleTokens>;
  prefixReuseResearcher: number;
  /** Every request, each against the earlier requests of its conversation. */
  prefixReuseAll: number;
  /** Every request, each against every earlier request of its run (any role); undefined when the
   *  requests could not be told apart by run (runs overlapping in time). */
  prefixReuseRun: number | undefined;
  /** Every request, each against every earlier request of the load: a provider caching across runs. */
  prefixReuseLoad: number;
  /** The share of the researcher conversations' text in their first requests (which nothing before could cache). */
  researcherFirstShare: number;
  /** How many researcher conversations there were. */
  researcherConversations: number;
  /** The researcher request that keeps least of its predecessor's prompt, and the text at the point they part. */
  divergence?: ReturnType<typeof worstDivergence>;
  /** Model requests in flight on average over the load (their summed durations ÷ its wall time). */
  meanInFlight: number;
}

/** When each run was in flight (from its submit to its end), in Date.now() milliseconds. */
export interface RunWindow {
  start: number;
  end: number;
}

/** The run each request belongs to, by the window it started in; undefined unless the windows are
 *  disjoint (one run at a time). */
export function requestRuns(log: LoggedRequest[], windows: RunWindow[]): string[] | undefined {
  const sorted = [...windows].sort((a, b) => a.start - b.start);
  if (sorted.some((w, i) => i > 0 && w.start < sorted[i - 1]!.end)) return undefined;
  return log.map((r) => String(sorted.findIndex((w) => r.startedAt >= w.start && r.startedAt <= w.end)));
}

export function modelCallFigures(log: LoggedRequest[], runs: number, wallMs: number, windows: RunWindow[] = []): ModelCallFigures {
  const answered = log.filter((r) => r.status !== undefined && r.status < 300 && !r.aborted);
  const byRole: Record<string, RoleTokens> = {};
  for (const r of answered) {
    const role = r.rule ?? '(no rule)';
    const t = (byRole[role] ??= { calls: 0, prompt: 0, completion: 0 });
    t.calls += 1 / runs;
    t.prompt += (r.usage?.prompt ?? 0) / runs;
    t.completion += (r.usage?.completion ?? 0) / runs;
  }
  // Every request the provider saw, answered or not, in the order it saw them.
  const reuse = prefixReuse(log.map((r) => r.body));
  const researcher = conversationsOf(reuse, (i) => log[i]!.rule === 'react');
  const runOf = requestRuns(log, windows);
  const bodies = log.map((r) => r.body);
  const inRun = runOf && windows.length ? prefixReuse(bodies, (_r, i) => runOf[i]!) : undefined;
  const ofLoad = prefixReuse(bodies, () => 'load');
  for (const [role, t] of Object.entries(byRole)) {
    const mine = (inRun ?? ofLoad).filter((r) => (log[r.index]!.rule ?? '(no rule)') === role);
    t.reuse = reuseShare(mine);
  }
  const busyMs = log.reduce((a, r) => a + Math.max(0, (r.endedAt ?? r.startedAt) - r.startedAt), 0);
  return {
    callsPerRun: answered.length / runs,
    byRole,
    prefixReuseResearcher: reuseShare(researcher),
    prefixReuseAll: reuseShare(reuse),
    prefixReuseRun: inRun ? reuseShare(inRun) : undefined,
    prefixReuseLoad: reuseShare(ofLoad),
    researcherFirstShare: firstRequestShare(researcher),
    researcherConversations: new Set(researcher.map((r) => r.conversation)).size,
    divergence: worstDivergence(researcher, (i) => renderPrompt(log[i]!.body)),
    meanInFlight: wallMs > 0 ? busyMs / wallMs : 0,
  };
}

/** The token table, one line per role, most prompt tokens first, and the total; each role's
 *  prefix reuse (within its run when runs were told apart) when the figures hold it. */
export function tokenTable(byRole: Record<string, RoleTokens>, overallReuse?: number): string[] {
  const rows = Object.entries(byRole).sort((a, b) => b[1].prompt - a[1].prompt);
  const total = rows.reduce(
    (a, [, t]) => ({ calls: a.calls + t.calls, prompt: a.prompt + t.prompt, completion: a.completion + t.completion }),
    {
      calls: 0,
      prompt: 0,
      completion: 0,
    },
  );
  const reuse = (t: RoleTokens) => (t.reuse === undefined ? '' : `${(100 * t.reuse).toFixed(0)}%`.padStart(8));
  const line = (role: string, t: RoleTokens) =>
    `  ${role.padEnd(18)}${t.calls.toFixed(2).padStart(8)}${t.prompt.toFixed(0).padStart(10)}${t.completion.toFixed(0).padStart(12)}${reuse(t)}`;
  const withReuse = rows.some(([, t]) => t.reuse !== undefined);
  return [
    `  ${'role'.padEnd(18)}${'calls'.padStart(8)}${'prompt'.padStart(10)}${'completion'.padStart(12)}${withReuse ? 'reuse'.padStart(8) : ''}`,
    ...rows.map(([k, t]) => line(k, t)),
    line('all', overallReuse === undefined ? total : { ...total, reuse: overallReuse }),
  ];
}
