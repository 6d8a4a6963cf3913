// The claim check, after the reporter: each cited sentence of the draft is compared with the
// evidence stored for the source it cites, in batches of claims per model call (several calls in
// flight). A citation the evidence does not support is removed from its sentence; a partly
// supported one is kept and flagged. The report is then assembled again from the checked draft,
// so the reference list, "Also consulted" and the link check follow, and saved with the figures.
// A batch the model cannot answer is left unchecked, and the run's notes say so.
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/activity';
import { citedClaims, evidenceFor, removeCitations, type CitedClaim } from '../../shared/claims';
import { ErrorType } from '../../shared/errors';
import type { Grounding } from '../../shared/messages';
import { assembleReport, citeRepeats, groundDraft, type CitationCheckRecord, type Reference } from '../../shared/report';
import { type Usage } from '../../shared/schemas';
import { addUsage, summarize } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { completeItems } from '../llm/partial-json';
import { count, jsonPrompt, text } from '../llm/prompt-def';
import type { Store, StoredSource } from '../store';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { REPORT_DRAFT_KEY, reportNotes, reportSources, versionedKey } from '../role-kit/report-writing';
import { defineRole } from '../role-kit/role';
import { plural, wasWere } from '../../shared/plural';

/** The answer: for each cited sentence and source, whether the source's evidence says it. */
export const CitationVerdicts = z.object({
  verdicts: z.array(
    z.object({
      id: z.string().describe('The id of the claim, as given'),
      verdict: z
        .enum(['supported', 'partial', 'unsupported'])
        .describe('supported: the evidence states it; partial: some of it; unsupported: the evidence does not say it or says otherwise'),
      reason: z.string().describe('One short sentence: what the evidence says or lacks'),
    }),
  ),
});
export type CitationVerdicts = z.infer<typeof CitationVerdicts>;

export const CITATION_CHECK_PROMPT = jsonPrompt(
  {
    file: 'citation-check',
    role: 'judge',
    vars: { claims: text, count: count },
    untrusted: { claims: 'claims' },
  },
  'CitationVerdicts',
  CitationVerdicts,
);

export interface VerifierLimits {
  /** Sentence–source pairs checked per report; the rest count as unchecked. */
  maxPairs: number;
  /** Pairs per model call. */
  batch: number;
  /** Model calls in flight at once. */
  parallel: number;
}

export const DEFAULT_VERIFIER_LIMITS: VerifierLimits = { maxPairs: 80, batch: 8, parallel: 3 };

interface Pair {
  id: string;
  claim: number;
  n: number;
  sourceId: string;
  text: string;
  title: string;
  evidence: string;
}

/** A sentence citing a source with a pair checked already: it takes that pair's verdict. */
type Copy = { claim: number; n: number; of: Pair };
type Verdict = { verdict: CitationCheckRecord['verdict'] | 'supported'; reason: string };

export interface VerifyOutput {
  grounding: Grounding;
  summary: string;
  usage: Usage;
}

/** `version`: a rewrite's report (2 and up); absent, the run's own. */
export type VerifyInput = { researchId: string; stepKeys: string[]; notes: string[]; version?: number | undefined };
export type VerifierDeps = { llm: Llm; store: Store; limits?: VerifierLimits | undefined };

export function createVerifierActivities(deps: VerifierDeps) {
  return { verifyCitations: (input: VerifyInput) => verifyCitations(deps, input) };
}

export const citationCheck = defineRole({
  does: "Checks each cited sentence of the report against its source's evidence; unsupported citations are removed.",
  prompts: { citationCheck: CITATION_CHECK_PROMPT },
  parts: [],
  activities: createVerifierActivities,
});

export async function verifyCitations(deps: VerifierDeps, input: VerifyInput): Promise<VerifyOutput> {
  const { researchId } = input;
  const limits = deps.limits ?? DEFAULT_VERIFIER_LIMITS;
  const { version } = input;
  const [draft] = await deps.store.getDocuments(researchId, [versionedKey(REPORT_DRAFT_KEY, version)]);
  if (!draft) throw ApplicationFailure.nonRetryable(`no report draft stored for ${researchId}`, ErrorType.NotFound);
  const title = typeof draft.meta.title === 'string' ? draft.meta.title : draft.summary;
  const { findings, refs, stored: sources } = await reportSources(deps.store, researchId, input.stepKeys);
  // Citations in whatever form the model wrote them become [n] of the numbers it was shown, and a
  // sentence that repeats a finding's gets its source: the check below judges those too.
  const grounded = groundDraft({ researchId, draft: draft.content, findings, refs });
  const repeats = citeRepeats(grounded.markdown, findings, refs, sources);
  const checked = { ...grounded, markdown: repeats.markdown };
  const claims = citedClaims(checked.markdown);
  const paired = pairUp(claims, refs, sources, limits.maxPairs);
  const { verdicts, usage } = await askInBatches(deps, { researchId, version }, paired.pairs, limits);
  const judged = judgeClaims(claims, paired, verdicts);
  const notes = await reportNotes(deps.store, input);
  if (judged.removed || judged.flagged) {
    notes.push({
      text:
        `The claim check removed ${plural(judged.removed, 'citation')} whose source did not support the sentence` +
        (judged.flagged ? ` and flagged ${judged.flagged} as only partly supported.` : '.'),
      kind: 'grounding',
    });
  }
  const report = assembleReport({
    researchId,
    title,
    draft: removeCitations(checked.markdown, claims, judged.drop),
    findings,
    refs,
    notes,
    earlier: checked,
    repeatsCited: repeats.added,
  });
  return publish(deps.store, { researchId, version }, report, judged, usage);
}

/** One check per distinct sentence and source; a source with no stored text cannot be checked,
 *  nor a pair past `maxPairs`. */
function pairUp(
  claims: CitedClaim[],
  refs: Reference[],
  sources: Map<string, StoredSource>,
  maxPairs: number,
): { pairs: Pair[]; copies: Copy[]; unchecked: number } {
  const pairs: Pair[] = [];
  const sameAs = new Map<string, Pair>();
  const copies: Copy[] = [];
  let unchecked = 0;
  claims.forEach((c, i) => {
    for (const n of c.numbers) {
      const ref = refs[n - 1]!;
      const content = sources.get(ref.sourceId)?.content.trim() ?? '';
      const key = `${n}\u0000${c.text}`;
      const earlier = sameAs.get(key);
      if (earlier) copies.push({ claim: i, n, of: earlier });
      else if (!content || pairs.length >= maxPairs) unchecked++;
      else {
        const pair = {
          id: `c${pairs.length + 1}`,
          claim: i,
          n,
          sourceId: ref.sourceId,
          text: c.text,
          title: ref.title,
          evidence: evidenceFor(c.text, content),
        };
        pairs.push(pair);
        sameAs.set(key, pair);
      }
    }
  });
  return { pairs, copies, unchecked };
}

/** The verdicts an answer cut off at its output limit finished, when it finished any. */
function salvageVerdicts(raw: string): { verdicts: unknown[] } | undefined {
  const verdicts = completeItems(raw, 'verdicts');
  return verdicts?.length ? { verdicts } : undefined;
}

/** A verdict's tokens in the answer at most (id, verdict and a short reason: 35-120 seen), and the answer's own. */
const VERDICT_TOKENS = 96;
const VERDICTS_OVERHEAD_TOKENS = 32;

/** The model's verdicts, `limits.batch` pairs per call and `limits.parallel` calls at once. A batch
 *  the model cannot answer gets no verdicts (its pairs count as unchecked), with a note. */
async function askInBatches(
  deps: VerifierDeps,
  { researchId, version }: { researchId: string; version?: number | undefined },
  pairs: Pair[],
  limits: VerifierLimits,
): Promise<{ verdicts: Map<string, Verdict>; usage: Usage }> {
  // No more claims a call than the judge's output limit has room for: a verdict takes up to about
  // VERDICT_TOKENS, and a batch whose answer is cut off is asked again (or goes unchecked).
  const room = Math.floor((deps.llm.outputLimit(CITATION_CHECK_PROMPT.role) - VERDICTS_OVERHEAD_TOKENS) / VERDICT_TOKENS);
  const size = Math.max(1, Math.min(limits.batch, room));
  const batches: Pair[][] = [];
  for (let i = 0; i < pairs.length; i += size) batches.push(pairs.slice(i, i + size));
  // A left-over batch is keyed by what it holds, not by when it was queued (parallel calls finish
  // in any order): a retried activity reuses each logged answer for the claims it answered.
  const first = batches.length;
  const keyOf = (b: number, batch: Pair[]) => (b < first ? `claims-${b + 1}` : `claims-rest-${batch[0]!.id}-${batch.length}`);
  const verdicts = new Map<string, Verdict>();
  const usage: Usage = { promptTokens: 0, completionTokens: 0, costUsd: 0 };
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const b = next++;
      const batch = batches[b]!;
      let r;
      try {
        r = await deps.llm.structured(
          CITATION_CHECK_PROMPT,
          { claims: batch.map(renderPair).join('\n\n'), count: batch.length },
          // An answer cut off at its limit keeps the verdicts it finished: the rest are asked again.
          { researchId, key: keyOf(b, batch), salvage: salvageVerdicts },
        );
      } catch (err) {
        if (!modelGaveUp(err)) throw err;
        await noteFallback(
          deps.store,
          researchId,
          'claim-check',
          versionedKey(keyOf(b, batch).replace('claims', 'batch'), version),
          `${plural(batch.length, 'citation')} ${wasWere(batch.length)} left unchecked`,
          err,
        );
        continue;
      }
      Object.assign(usage, addUsage(usage, r.usage));
      const ids = new Set(batch.map((p) => p.id));
      for (const v of r.output.verdicts) if (ids.has(v.id) && !verdicts.has(v.id)) verdicts.set(v.id, v);
      // Claims the answer left out (it was cut off, or skipped them) go in a batch of their own,
      // once the model has answered some of this one: a batch that gives nothing is not sent again.
      const left = batch.filter((p) => !verdicts.has(p.id));
      if (left.length && left.length < batch.length) batches.push(left);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limits.parallel, batches.length) }, worker));
  return { verdicts, usage };
}

interface Judged {
  /** Citation numbers to remove, by claim. */
  drop: Map<number, Set<number>>;
  records: CitationCheckRecord[];
  supported: number;
  flagged: number;
  removed: number;
  unchecked: number;
}

/** What each verdict does: an unsupported citation is removed, a partly supported one flagged. */
/** What an "unsupported" verdict becomes when the source states every figure of the sentence. */
const FIGURES_STATED: Verdict = {
  verdict: 'partial',
  reason: 'the model found no support, but the source states every figure of the sentence (kept, flagged)',
};

/** The figures of a text (numbers of two digits or more), "41, 000" read as 41,000, separators dropped. */
const figuresIn = (text: string) =>
  (text.replace(/(\d), (\d{3})\b/g, '$1,$2').match(/\d+(?:[.,]\d+)*/g) ?? [])
    .map((n) => n.replace(/,/g, ''))
    .filter((n) => n.replace(/\D/g, '').length >= 2);

/**
 * Whether a cited sentence's figures are all in its source's evidence: a small model's judge often
 * calls a sentence it cannot parse unsupported, and code can see the source says those numbers. A
 * sentence without figures is the model's to judge.
 */
function statesFigures(claim: string, evidence: string): boolean {
  const wanted = figuresIn(claim.replace(/\[\d+\]/g, ''));
  const have = new Set(figuresIn(evidence));
  return wanted.length > 0 && wanted.every((n) => have.has(n));
}

function judgeClaims(
  claims: CitedClaim[],
  paired: { pairs: Pair[]; copies: Copy[]; unchecked: number },
  verdicts: Map<string, Verdict>,
): Judged {
  const drop = new Map<number, Set<number>>();
  const records: CitationCheckRecord[] = [];
  let { unchecked } = paired;
  let supported = 0;
  const judge = (claim: number, n: number, pair: Pair) => {
    const given = verdicts.get(pair.id);
    if (!given) return void unchecked++;
    const v = given.verdict === 'unsupported' && statesFigures(claims[claim]!.text, pair.evidence) ? FIGURES_STATED : given;
    if (v.verdict === 'supported') return void supported++;
    const action = v.verdict === 'unsupported' ? 'removed' : 'flagged';
    if (action === 'removed') (drop.get(claim) ?? drop.set(claim, new Set()).get(claim)!).add(n);
    records.push({
      n,
      sourceId: pair.sourceId,
      claim: summarize(claims[claim]!.text, 300),
      verdict: v.verdict,
      reason: summarize(v.reason, 300),
      action,
    });
  };
  for (const p of paired.pairs) judge(p.claim, p.n, p);
  for (const c of paired.copies) judge(c.claim, c.n, c.of);
  const removed = records.filter((r) => r.action === 'removed').length;
  return { drop, records, supported, flagged: records.length - removed, removed, unchecked };
}

/** Saves the checked report with its figures and records; what the workflow is told. */
async function publish(
  store: Store,
  { researchId, version }: { researchId: string; version?: number | undefined },
  report: ReturnType<typeof assembleReport>,
  judged: Judged,
  usage: Usage,
): Promise<VerifyOutput> {
  const { records, supported, flagged, removed } = judged;
  // The records name the numbers the published report gives their sources.
  const published = new Map(report.references.map((r) => [r.sourceId, r.n]));
  for (const r of records) r.n = published.get(r.sourceId) ?? r.n;
  const grounding: Grounding = {
    // The citations of pages the run read; those of snippets are counted on their own.
    citations: report.marks - report.uncited,
    unresolved: report.unresolved,
    ...(report.uncited ? { snippetCitations: report.uncited } : {}),
    checked: supported + records.length,
    supported,
    flagged,
    removed,
    unchecked: judged.unchecked,
    linksRemoved: report.removedLinks.length,
  };
  const stored = await store.getReport(researchId, version);
  await store.saveReport({
    researchId,
    title: report.title,
    locale: stored?.locale ?? '',
    doc: report.doc,
    markdown: report.markdown,
    references: report.references,
    removedCitations: report.removedCitations,
    removedLinks: report.removedLinks,
    grounding,
    citationChecks: records,
    version,
  });
  return {
    grounding,
    summary: `${grounding.checked} of ${plural(grounding.citations, 'citation')} checked: ${supported} supported, ${flagged} flagged, ${removed} removed`,
    usage,
  };
}

function renderPair(p: Pair): string {
  return `<claim id="${p.id}">\n${p.text}\n</claim>\n<evidence for="${p.id}" source="[${p.n}] ${p.title.replace(/"/g, "'")}">\n${p.evidence}\n</evidence>`;
}
