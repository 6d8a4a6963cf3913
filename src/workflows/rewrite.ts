// A finished run's report rewritten from the same findings and sources: another length, language,
// audience, instructions or model. Only the report's activities run (one call, or outline and
// sections then assembly for `long`, then the claim check): no coordinator, search, crawl or step.
// What the run's own report was written from (the research question, the accepted step results,
// the run's notes) is read from PostgreSQL; the new version's draft, sections and report are
// stored under its own keys, so version 1 never changes. The version's usage is its own.
import { ApplicationFailure, CancellationScope, isCancellation, setCurrentDetails } from '@temporalio/workflow';
import { ErrorType, failureMessage } from '../shared/errors';
import { addUsage, summarize, ZERO_USAGE } from '../shared/plain';
import type { MemoryOwner } from '../shared/memory';
import type { RewriteInput, RewriteResult } from '../shared/report-versions';
import type { Usage } from '../shared/schemas';
import type { RewriteBasis } from '../activities/report-versions';
import { activitiesFor } from './proxies';

type Calls = ReturnType<typeof activitiesFor>;
type WriteInput = {
  researchId: string;
  question: string;
  locale: string;
  stepKeys: string[];
  notes: string[];
  version: number;
  audience?: string;
  instructions?: string;
  model?: string;
  memoryOf?: MemoryOwner;
};

export async function reportRewriteWorkflow(input: RewriteInput): Promise<RewriteResult> {
  const calls = activitiesFor({ maxOutage: input.maxOutage, retry: input.retry });
  const { researchId, version, options } = input;
  let usage: Usage = ZERO_USAGE;
  const spend = (u: Usage) => void (usage = addUsage(usage, u));
  setCurrentDetails(`Report version ${version} of ${researchId}: writing`);
  try {
    const basis = await calls.store.startRewrite.executeWithOptions({ summary: `rewrite: version ${version}, what it is written from` }, [
      { researchId, tenant: input.tenant, version },
    ]);
    const write = writeInputOf(input, basis);
    const length = options.reportLength ?? basis.length ?? 'standard';
    const report = await writeVersion(calls, write, length, spend);
    const v = await calls.llm.verifyCitations.executeWithOptions({ summary: `claim check of version ${version}` }, [
      { researchId, stepKeys: write.stepKeys, notes: write.notes, version },
    ]);
    spend(v.usage);
    const spent = await calls.store.finishRewrite.executeWithOptions({ summary: `rewrite: version ${version} ready` }, [
      { researchId, version, status: 'ready', usage },
    ]);
    setCurrentDetails(`Report version ${version} of ${researchId}: ready\n${v.summary}`);
    return { version, status: 'ready', title: report.title, usage: spent };
  } catch (err) {
    return await endFailed(calls, input, usage, err);
  }
}

/** What the version is written from: the run's question, findings and notes, with the rewrite's options. */
function writeInputOf(input: RewriteInput, basis: RewriteBasis): WriteInput {
  const { researchId, version, options } = input;
  return {
    researchId,
    question: basis.question,
    locale: options.locale ?? basis.locale,
    stepKeys: basis.stepKeys,
    notes: [...basis.notes],
    version,
    ...(options.audience ? { audience: options.audience } : {}),
    ...(options.instructions ? { instructions: options.instructions } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(input.memoryOf ? { memoryOf: input.memoryOf } : {}),
  };
}

/** The version marked failed with what it spent, and the workflow failed with the reason. */
async function endFailed(calls: Calls, input: RewriteInput, usage: Usage, err: unknown): Promise<never> {
  const { researchId, version } = input;
  const error = isCancellation(err) ? 'cancelled' : summarize(failureMessage(err), 500);
  // The version says it failed, even when this scope is being cancelled.
  await CancellationScope.nonCancellable(() =>
    calls.store.finishRewrite.executeWithOptions({ summary: `rewrite: version ${version} failed` }, [
      { researchId, version, status: 'failed', usage, error },
    ]),
  );
  setCurrentDetails(`Report version ${version} of ${researchId}: failed\n${error}`);
  if (isCancellation(err) || err instanceof ApplicationFailure) throw err;
  throw ApplicationFailure.nonRetryable(error, ErrorType.ResearchFailed);
}

/** The report in one call (brief, standard), or section by section (long, or findings too long for one call). */
async function writeVersion(calls: Calls, input: WriteInput, length: 'brief' | 'standard' | 'long', spend: (u: Usage) => void) {
  const oneCall =
    length === 'long'
      ? undefined
      : await calls.llm.writeReport.executeWithOptions({ summary: `reporter: version ${input.version}, ${length}` }, [
          { ...input, length, sectionsIfTooLong: true },
        ]);
  if (oneCall) spend(oneCall.usage);
  if (oneCall && !oneCall.bySection) return oneCall;
  if (oneCall?.bySection) input.notes.push('The findings did not fit the model in one call: the report was written section by section.');
  const outline = await calls.llm.outlineReport.executeWithOptions({ summary: `reporter: outline of version ${input.version}` }, [input]);
  spend(outline.usage);
  const n = outline.headings.length;
  const written = await Promise.all(
    outline.headings.map((heading, section) =>
      calls.llm.writeSection.executeWithOptions(
        { summary: `reporter: version ${input.version}, section ${section + 1} of ${n}: ${heading}` },
        [{ ...input, section }],
      ),
    ),
  );
  for (const w of written) spend(w.usage);
  return calls.store.assembleSections.executeWithOptions({ summary: `report: version ${input.version}, ${n} sections put together` }, [
    { ...input, sections: n },
  ]);
}
