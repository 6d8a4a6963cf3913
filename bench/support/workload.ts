// The load bench's workloads: what the scripted model answers each run, by the run's index.
// - standard: runs of 1, 2, 3 steps in turn, every third ending with a processing step (with the
//   sandbox image); the judge passes every step, gap reflection finds nothing missing.
// - users: closer to the plans users' questions get: about 2.3 steps a plan, a processing step in
//   45 % of runs (with the sandbox image), the judge failing 10 % of steps' first attempt (the step
//   runs again with the feedback), and gap reflection adding one follow-up step in 10 % of runs.
//   A research step's researcher reads a page (search, crawl, answer) in 1 of 4 steps and answers
//   from the search results in the others: about 22 model calls a run, near the 21 measured on a
//   held-out load of users' plans (issue 37); the bench prints the figure.
// Every choice follows from the run's index by fixed patterns (not Math.random), so two commits
// get the same runs, and any 20 runs in a row hold the stated shares exactly.
import type { ChatRequest, Reply, Rule } from '../../test/support/llm-server';
import { defaultReact, planJson, researchRules, stepTitleOf, userText, type PlanSpec } from '../../test/support/research-script';

export type WorkloadName = 'standard' | 'users';

/** The question of run `i` of a batch: the tag lets the scripted model tell the runs apart. */
export const questionOf = (label: string, i: number) => `How cheap is solar power now? (${label} run ${i})`;
const TAG = /\(([a-z-]+) run (\d+)\)/;

/** What run `i` of the users workload does. */
export function usersRun(i: number, sandbox: boolean): { steps: number; processing: boolean; gapLoop: boolean } {
  return {
    steps: (i * 3) % 10 < 3 ? 3 : 2, // 3 of 10 runs have three steps: 2.3 on average
    processing: sandbox && (i * 7 + 3) % 20 < 9, // 9 of 20
    gapLoop: (i * 9 + 5) % 10 === 0, // 1 of 10
  };
}

/** Whether the judge fails the first attempt of step `k` (0-based) of run `i`: s1 in runs 3, 13,
 *  23…, s2 in runs 6, 16, 26…, s3 in runs 10, 30, 50… (which have three steps). That is 0.25 of
 *  the 2.4 steps a run has with gap reflection's: about 10 %. */
export function judgeFailsFirst(i: number, k: number): boolean {
  if (k === 0) return i % 10 === 3;
  if (k === 1) return i % 10 === 6;
  return k === 2 && i % 20 === 10;
}

/** Whether step `k` of run `i` reads a page before it answers: 1 in 4 of each k. */
export const stepCrawls = (i: number, k: number) => (i + k * 3) % 4 === 0;

/** Step `sN` is index N-1; a follow-up step of gap reflection counts as the fourth. */
const stepIndex = (req: ChatRequest) => {
  const title = stepTitleOf(req);
  return title ? Number(/^Step s(\d+)$/.exec(title)?.[1] ?? 4) - 1 : -1;
};

export function usersPlan(i: number, sandbox: boolean): PlanSpec[] {
  const run = usersRun(i, sandbox);
  const steps: PlanSpec[] = Array.from({ length: run.steps }, (_, k) => ({ id: `s${k + 1}` }));
  if (run.processing) steps[run.steps - 1] = { id: `s${run.steps}`, type: 'processing', dependsOn: steps.slice(0, -1).map((s) => s.id) };
  return steps;
}

/** The standard workload's plan by the planner's call order: 1, 2, 3 steps in turn. */
function standardPlan(n: number, sandbox: boolean): PlanSpec[] {
  const count = (n % 3) + 1;
  const steps: PlanSpec[] = Array.from({ length: count }, (_, k) => ({ id: `s${k + 1}` }));
  if (sandbox && n % 3 === 2) steps[count - 1] = { id: `s${count}`, type: 'processing', dependsOn: steps.slice(0, -1).map((s) => s.id) };
  return steps;
}

/** The run a request belongs to, from the tag the users workload carries into the research question. */
function runOf(req: ChatRequest): { label: string; i: number } | undefined {
  const m = TAG.exec(req.messages.map((x) => x.content ?? '').join('\n'));
  return m ? { label: m[1]!, i: Number(m[2]) } : undefined;
}

/** The rewrite answers a research question that keeps the run's tag: every run researches a
 *  question of its own, as users' runs do (with one question for all, the same step of two runs
 *  would send the same prompts, and count as one conversation in the prefix-reuse share), and the
 *  planner, the judge and gap reflection, which all see it, can tell which run they answer. */
const taggedRewrite = (req: ChatRequest): Reply => ({
  json: {
    researchQuestion: `How far did solar costs fall 2010-2022? ${TAG.exec(userText(req))?.[0] ?? ''}`.trim(),
    queries: ['solar cost', 'solar lcoe', 'pv module price'],
  },
});

export function workloadRules(name: WorkloadName, sandbox: boolean): Rule[] {
  // The standard workload's plans go by the planner's call order, as they always have.
  if (name === 'standard')
    return researchRules({ rewrite: taggedRewrite, planner: (_req, n) => ({ json: planJson(standardPlan(n, sandbox)) }) });
  const failed = new Set<string>();
  const judge = (req: ChatRequest): Reply => {
    const run = runOf(req);
    const k = stepIndex(req);
    const key = `${run?.label}/${run?.i}/${k}`;
    if (!run || k < 0 || k > 2 || !judgeFailsFirst(run.i, k) || failed.has(key)) return { json: { passed: true, feedback: '' } };
    failed.add(key);
    return { json: { passed: false, feedback: 'The 2023 figure is missing; find it and cite its source.' } };
  };
  const gaps = (req: ChatRequest): Reply => {
    const run = runOf(req);
    if (!run || !usersRun(run.i, sandbox).gapLoop) return { json: { answered: true, gaps: [], followUpSteps: [] } };
    const followUp = {
      id: 'gap-2023',
      title: 'Step gap-2023',
      description: 'Find the 2023 figures.',
      type: 'research',
      needSearch: true,
      dependsOn: [],
    };
    return { json: { answered: false, gaps: ['No figure for 2023.'], followUpSteps: [followUp] } };
  };
  // The default researcher searches, reads the first result, then answers; the others answer
  // after the search.
  const react = (req: ChatRequest): Reply => {
    const run = runOf(req);
    if (!run || stepCrawls(run.i, stepIndex(req)) || !req.messages.some((m) => m.role === 'tool')) return defaultReact(req);
    return { content: 'The search results answer the step.' };
  };
  return researchRules({
    rewrite: taggedRewrite,
    planner: (req) => ({ json: planJson(usersPlan(runOf(req)?.i ?? 0, sandbox)) }),
    react,
    judge,
    gaps,
  });
}
