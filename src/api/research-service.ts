// Temporal-facing operations behind the HTTP API (and the CLI), one part a module under research/:
// start.ts (check a request, start its run), status.ts (read a run's status: where it comes from,
// in order), waiting.ts (what a run in flight waits for), list.ts (the tenant's runs),
// messages.ts (review, clarification, steering, cancel), outputs.ts (report, sources, artifacts).
import { researchContext, type ResearchContext, type ResearchServiceDeps } from './research/context';
import { list } from './research/list';
import { answer, approve, cancel, revise, steer } from './research/messages';
import { artifact, artifacts, report, reportImages, source } from './research/outputs';
import { checkRequest, runStart, start } from './research/start';
import { endProbe, readStatus } from './research/status';
import { sessionOfRun } from './research/session';
import { reportCover } from './research/cover';
import { reportVersions, rewrite } from './research/versions';

export type { ResearchServiceDeps } from './research/context';
export type { RunListFilter } from './research/list';
export { searchWords } from './research/list';
export { idForIdempotencyKey, runPriority, type StartResult } from './research/start';

export function createResearchService(deps: ResearchServiceDeps) {
  const ctx = researchContext(deps);
  const withContext =
    <A extends unknown[], R>(f: (ctx: ResearchContext, ...args: A) => R) =>
    (...args: A): R =>
      f(ctx, ...args);
  return {
    checkRequest: withContext(checkRequest),
    runStart: withContext(runStart),
    start: withContext(start),
    get: withContext(readStatus),
    list: withContext(list),
    /** Checks the run is the tenant's; returns a probe that says whether it has ended. */
    owned: withContext(endProbe),
    /** The session a run of the tenant's was started in (undefined: none, or not the tenant's run). */
    sessionOf: withContext(sessionOfRun),
    reportImages: withContext(reportImages),
    source: withContext(source),
    approve: withContext(approve),
    revise: withContext(revise),
    answer: withContext(answer),
    steer: withContext(steer),
    cancel: withContext(cancel),
    report: withContext(report),
    /** The question and date a slide deck's title slide gives. */
    reportCover: withContext(reportCover),
    /** A new version of a finished run's report, from the same findings (reportRewriteWorkflow). */
    rewrite: withContext(rewrite),
    reportVersions: withContext(reportVersions),
    artifacts: withContext(artifacts),
    artifact: withContext(artifact),
  };
}

export type ResearchService = ReturnType<typeof createResearchService>;
