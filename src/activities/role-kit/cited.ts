// What the writing roles share: source and dependency blocks for prompts, and a cited document
// written by a model, with every citation checked against the sources it was shown.
import { sentencesOf } from '../../shared/summary';
import { groundFindings, withoutSourceHeads } from '../../shared/citations';
import { LISTED_BY_CODE } from '../../shared/report';
import { type PlanStep, type StepOutput } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import type { PromptVars, StructuredPrompt } from '../llm/prompt-def';
import type { Store, StoredSource } from '../store';
import { modelGaveUp, noteCorrection, noteFallback } from './fallbacks';
import { echoedExample } from './prompt-copies';
import { plural } from '../../shared/plural';
import { FIGURES_FROM_PAGE, quotedFigures } from '../../shared/source-kinds';

/** Characters of one source's text shown to a writer. */
const SOURCE_CHARS = 2_000;
/** Characters of one earlier result shown to a step. */
export const DOC_CHARS = 12_000;

export function sourcesBlock(sources: StoredSource[]): string {
  if (sources.length === 0) return '(no sources were retrieved)';
  return sources
    .map((s) => `<source id="${s.sourceId}" url="${s.url}">\nTitle: ${s.title}\n${s.content.slice(0, SOURCE_CHARS)}\n</source>`)
    .join('\n');
}

/** Characters of one source in a list written by code. */
const LISTED_CHARS = 400;

/** Figure lines of one source in a list written by code, and characters of them. */
const LISTED_FIGURES = 6;
const LISTED_FIGURE_CHARS = 300;

/** A cited text written by code from the sources: one line each, with its id: its opening
 *  sentences, and the figures a read page states when its reading quoted them (they come after the
 *  reading's own words, where the opening would not reach them). */
export function sourcesListed(sources: StoredSource[]): { text: string; summary: string } {
  if (!sources.length) return { text: 'No sources were found.', summary: 'No sources were found.' };
  const lines = sources.map((s) => {
    const figures = quotedFigures(s.content)
      .slice(0, LISTED_FIGURES)
      .map((f) => f.replace(/[.;]+$/, ''))
      .join('; ');
    const lead = leadSentences(s.content.split(FIGURES_FROM_PAGE)[0]!, LISTED_CHARS);
    const stated = figures ? ` The page states: ${summarize(figures, LISTED_FIGURE_CHARS)}.` : '';
    return `- **${s.title.replace(/[[\]*]/g, '')}**: ${lead}${stated} [${s.sourceId}]`;
  });
  return { text: lines.join('\n'), summary: `${plural(sources.length, 'source')} found.` };
}

/**
 * The whole sentences a text begins with, up to `max` characters (a first sentence longer than
 * that cut at a word, marked …), without HTML tags: what code lists reads as text, not as a cut.
 */
export function leadSentences(text: string, max: number): string {
  let out = '';
  for (const sentence of sentencesOf(text.replace(/<\/?[a-z][^<>]{0,200}>/gi, ' '))) {
    if (out && out.length + 1 + sentence.length > max) break;
    out = out ? `${out} ${sentence}` : sentence;
  }
  if (out.length <= max) return out;
  const cut = out.lastIndexOf(' ', max - 1);
  return `${out.slice(0, cut > max / 2 ? cut : max - 1).replace(/[\s,;:]+$/, '')}…`;
}

/**
 * A writer's text with its citations grounded (src/shared/citations.ts groundFindings): every form
 * of a source it was shown becomes [S…], made-up ones go. A text that cites none of the sources
 * it was given keeps its words, and the evidence follows, listed by code with its ids, so nothing
 * unsourced stands alone in the report; that is noted.
 */
export async function groundedFindings(
  store: Pick<Store, 'saveDocument'>,
  researchId: string,
  key: string,
  written: string,
  sources: StoredSource[],
): Promise<{ text: string; sourceIds: string[]; dropped: string[]; listedByCode: boolean }> {
  // A copied source head ("[S…] Title — https://…") goes first: it would read as a title glued to text.
  const g = groundFindings(withoutSourceHeads(written, sources), sources);
  if (g.cited.length || !sources.length) return { text: g.text, sourceIds: g.cited, dropped: g.dropped, listedByCode: false };
  const listed = sourcesListed(sources);
  await noteCorrection(
    store,
    researchId,
    'citations',
    `uncited/${key}`,
    `the text written for ${key} cited none of its sources, so the evidence retrieved is listed with it`,
  );
  return {
    text: `${g.text.trim()}\n\n${LISTED_BY_CODE}\n${listed.text}`,
    sourceIds: sources.map((s) => s.sourceId),
    dropped: g.dropped,
    listedByCode: true,
  };
}

/** Template variables every step prompt shares. */
export function stepVars(input: { question: string; locale: string; step: PlanStep }) {
  return { question: input.question, locale: input.locale, stepTitle: input.step.title, stepDescription: input.step.description };
}

/** The results of the steps a step depends on, as a prompt block, with the sources they cite. */
export async function dependencyBlock(
  store: Store,
  researchId: string,
  keys: string[],
): Promise<{ text: string; sources: StoredSource[] }> {
  const docs = await store.getDocuments(researchId, keys);
  const ids = [...new Set(docs.flatMap((d) => d.sourceIds))];
  const sources = ids.length ? await store.getSources(researchId, ids) : [];
  const text = docs.length ? docs.map((d) => `<result key="${d.key}">\n${d.content.slice(0, DOC_CHARS)}\n</result>`).join('\n') : '(none)';
  return { text, sources };
}

/** Writes a cited text from sources and stores it, keeping only citations of those sources. The
 *  prompt's answer is a CitedText. */
export async function writeCitedDocument<P extends StructuredPrompt>(
  deps: { llm: Llm; store: Store },
  args: {
    researchId: string;
    key: string;
    kind: string;
    prompt: P;
    vars: PromptVars<P>;
    sources: StoredSource[];
    meta?: Record<string, unknown>;
    /** The prompt's example answers' texts: an answer that repeats one (echoedExample) is not used. */
    examples?: string[];
  },
): Promise<StepOutput> {
  let r: { output: unknown; usage: StepOutput['usage'] };
  let listed = false;
  // The sources themselves, listed and cited by code: what the model would have summarised.
  const listInstead = async (why: unknown) => {
    listed = true;
    const what = `the ${args.kind} lists the sources found instead of summarising them`;
    await noteFallback(deps.store, args.researchId, args.kind, args.key, what, why);
    return sourcesListed(args.sources);
  };
  try {
    r = await deps.llm.structured(args.prompt, args.vars, { researchId: args.researchId });
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    r = { output: await listInstead(err), usage: ZERO_USAGE };
  }
  let output = r.output as { text: string; summary: string };
  const reference = [String((args.vars as Record<string, unknown>).question ?? ''), ...args.sources.map((x) => `${x.title} ${x.content}`)];
  const echo = listed ? undefined : echoedExample(`${output.text}\n${output.summary}`, args.examples ?? [], reference.join('\n'));
  if (echo) output = await listInstead(`repeated its prompt's example ("${summarize(echo, 80)}") instead of writing from the sources`);
  const grounded = await groundedFindings(deps.store, args.researchId, args.key, output.text, args.sources);
  const { text, sourceIds, dropped } = grounded;
  await deps.store.saveDocument(args.researchId, {
    key: args.key,
    kind: args.kind,
    content: text,
    summary: summarize(output.summary),
    sourceIds,
    // Evidence listed by code is no summary: the planner does not take it for enough context.
    meta: { ...(args.meta ?? {}), droppedSourceIds: dropped, ...(listed || grounded.listedByCode ? { listedByCode: true } : {}) },
  });
  return { key: args.key, summary: summarize(output.summary, 300), sourceIds, usage: r.usage };
}
