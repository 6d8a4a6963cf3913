// The research workflow's role activities. Each loads what it needs from the store by id, makes
// one LLM call (or one search), stores what it produced, and returns ids and a short summary:
// pages, briefs and reports never travel through Temporal's history.
import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { citedSourceIds, checkCitations, keepKnownSourceIds, sourceIdsToNumbers } from '../shared/citations';
import { ErrorType } from '../shared/errors';
import { summarize, type CoordinatorDecision, type JudgeVerdict, type Plan, type PlanStep, type QueryExpansion, type Usage, planProblems } from '../shared/schemas';
import type { CallStructured } from './llm';
import { routeQuery } from './search/providers';
import { normalizeUrl, type SearchHit, type SearchProvider } from './search/types';
import type { ResearchStore, StoredSource } from './store';

export interface ResearchActivityDeps {
  call: CallStructured;
  store: ResearchStore;
  /** Enabled providers by name; routing picks among them per query. */
  providers: Map<string, SearchProvider>;
  searchMaxResults: number;
}

export interface SourceRef {
  sourceId: string;
  title: string;
  url: string;
}

export interface StepOutput {
  /** Documents table key of the result: `step/<stepId>/<attempt>`. */
  key: string;
  summary: string;
  sourceIds: string[];
  usage: Usage;
}

function isPermanent(err: unknown): boolean {
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** De-duplicates hits by normalised URL (keeping the best score and longest text), best first. */
export function mergeHits(hits: SearchHit[], max: number): StoredSource[] {
  const byId = new Map<string, StoredSource & { score: number }>();
  for (const h of hits) {
    let id: string;
    try {
      id = sourceIdFor(h.url);
    } catch {
      continue;
    }
    const prev = byId.get(id);
    if (!prev) {
      byId.set(id, { sourceId: id, url: h.url, title: h.title, content: h.content, provider: h.source, score: h.score });
      continue;
    }
    prev.score = Math.max(prev.score, h.score);
    if (h.content.length > prev.content.length) prev.content = h.content;
  }
  return [...byId.values()].sort((a, b) => b.score - a.score).slice(0, max).map(({ score: _score, ...s }) => s);
}

export function sourceIdFor(url: string): string {
  return `S${createHash('sha256').update(normalizeUrl(url)).digest('hex').slice(0, 8)}`;
}

const PAGE_CHARS = 2_000;
const DOC_CHARS = 12_000;

function sourcesBlock(sources: StoredSource[]): string {
  if (sources.length === 0) return '(no sources were retrieved)';
  return sources
    .map((s) => `<source id="${s.sourceId}" url="${s.url}">\nTitle: ${s.title}\n${s.content.slice(0, PAGE_CHARS)}\n</source>`)
    .join('\n');
}

/** Template variables every step prompt shares. */
function stepVars(input: { question: string; locale: string; step: PlanStep; feedback: string }, dependencies: string) {
  return {
    question: input.question,
    locale: input.locale,
    stepTitle: input.step.title,
    stepDescription: input.step.description,
    dependencies,
    feedback: input.feedback || '(none)',
  };
}

export function createResearchActivities(deps: ResearchActivityDeps) {
  const { call, store } = deps;

  async function classifyRequest(input: { researchId: string; question: string; locale?: string; allowClarification: boolean; clarifications: string }): Promise<{ decision: CoordinatorDecision; usage: Usage }> {
    const r = await call({
      researchId: input.researchId,
      role: 'coordinator',
      prompt: 'coordinator',
      schema: 'CoordinatorDecision',
      vars: {
        question: input.question,
        localeHint: input.locale ? `The user asked for the report in ${input.locale}; use that tag.` : '',
        clarificationRule: input.allowClarification
          ? 'If the request is too ambiguous to research (the subject, scope or goal could mean very different things), you may set `clarificationQuestion` to one short question instead; otherwise set it to null.'
          : 'Always set `clarificationQuestion` to null.',
        clarifications: input.clarifications || '(none)',
      },
      untrustedVars: ['question', 'clarifications'],
    });
    return { decision: r.output, usage: r.usage };
  }

  async function expandQueries(input: { researchId: string; question: string; locale: string; count: number }): Promise<{ expansion: QueryExpansion; usage: Usage }> {
    const r = await call({
      researchId: input.researchId,
      role: 'planner',
      prompt: 'rewrite',
      schema: 'QueryExpansion',
      vars: { question: input.question, locale: input.locale, count: input.count },
      untrustedVars: ['question'],
    });
    return { expansion: { ...r.output, queries: r.output.queries.slice(0, input.count) }, usage: r.usage };
  }

  async function webSearch(input: { researchId: string; query: string }): Promise<{ query: string; results: SourceRef[]; providers: string[]; errors: string[] }> {
    if (deps.providers.size === 0) {
      throw ApplicationFailure.nonRetryable('no search provider is configured: set SEARCH_PROVIDERS (and SEARXNG_URL or the providers\' keys)', 'SearchNotConfigured');
    }
    const names = routeQuery(input.query, [...deps.providers.keys()]);
    const signal = Context.current().cancellationSignal;
    const settled = await Promise.allSettled(names.map((n) => deps.providers.get(n)!.search(input.query, { maxResults: deps.searchMaxResults, signal })));
    const errors: string[] = [];
    const hits: SearchHit[] = [];
    settled.forEach((r, i) => {
      if (r.status === 'fulfilled') hits.push(...r.value);
      else errors.push(`${names[i]}: ${(r.reason as Error).message}`);
    });
    if (hits.length === 0 && errors.length === names.length) {
      const permanent = settled.every((r) => r.status === 'rejected' && isPermanent(r.reason));
      if (permanent) throw ApplicationFailure.nonRetryable(`every search provider refused "${input.query}": ${errors.join('; ')}`, 'SearchRejected');
      throw new Error(`every search provider failed for "${input.query}": ${errors.join('; ')}`);
    }
    const sources = mergeHits(hits, deps.searchMaxResults);
    await store.saveSources(input.researchId, sources);
    return { query: input.query, results: sources.map((s) => ({ sourceId: s.sourceId, title: summarize(s.title, 120), url: s.url })), providers: names, errors };
  }

  /** Writes a cited text from sources, keeping only citations of those sources. */
  async function citedDocument(args: {
    researchId: string;
    key: string;
    kind: string;
    role: 'researcher' | 'coder' | 'planner';
    prompt: string;
    vars: Record<string, string | number>;
    untrustedVars: string[];
    sources: StoredSource[];
    meta?: Record<string, unknown>;
  }): Promise<StepOutput> {
    const r = await call({ researchId: args.researchId, role: args.role, prompt: args.prompt, schema: 'CitedText', vars: args.vars, untrustedVars: args.untrustedVars });
    const known = new Set(args.sources.map((s) => s.sourceId));
    const { text, dropped } = keepKnownSourceIds(r.output.text, known);
    const sourceIds = citedSourceIds(text);
    await store.saveDocument(args.researchId, {
      key: args.key,
      kind: args.kind,
      content: text,
      summary: summarize(r.output.summary),
      sourceIds,
      meta: { ...(args.meta ?? {}), droppedSourceIds: dropped },
    });
    return { key: args.key, summary: summarize(r.output.summary, 300), sourceIds, usage: r.usage };
  }

  async function writeBackground(input: { researchId: string; question: string; locale: string; sourceIds: string[]; searchErrors: string[] }): Promise<StepOutput> {
    const sources = await store.getSources(input.researchId, input.sourceIds);
    return citedDocument({
      researchId: input.researchId,
      key: 'background',
      kind: 'background',
      role: 'planner',
      prompt: 'background',
      vars: { question: input.question, locale: input.locale, sources: sourcesBlock(sources), searchErrors: input.searchErrors.join('\n') || '(none)' },
      untrustedVars: ['question', 'sources'],
      sources,
    });
  }

  async function dependencyBlock(researchId: string, keys: string[]): Promise<{ text: string; sources: StoredSource[] }> {
    const docs = await store.getDocuments(researchId, keys);
    const ids = [...new Set(docs.flatMap((d) => d.sourceIds))];
    const sources = ids.length ? await store.getSources(researchId, ids) : [];
    const text = docs.length ? docs.map((d) => `<result key="${d.key}">\n${d.content.slice(0, DOC_CHARS)}\n</result>`).join('\n') : '(none)';
    return { text, sources };
  }

  async function planResearch(input: { researchId: string; question: string; locale: string; maxSteps: number; feedback: string; problems: string[] }): Promise<{ plan: Plan; problems: string[]; usage: Usage }> {
    const [background] = await store.getDocuments(input.researchId, ['background']);
    const r = await call({
      researchId: input.researchId,
      role: 'planner',
      prompt: 'planner',
      schema: 'Plan',
      vars: {
        question: input.question,
        locale: input.locale,
        maxSteps: input.maxSteps,
        background: background ? `${background.content.slice(0, DOC_CHARS)}` : '(no background could be gathered)',
        feedback: input.feedback || '(none)',
        problems: input.problems.length ? `Your previous plan was invalid: ${input.problems.join('; ')}. Fix these problems.` : '',
      },
      untrustedVars: ['question', 'background', 'feedback'],
    });
    return { plan: r.output, problems: planProblems(r.output, input.maxSteps), usage: r.usage };
  }

  async function summarizeStep(input: { researchId: string; key: string; question: string; locale: string; step: PlanStep; sourceIds: string[]; dependencyKeys: string[]; feedback: string; searchErrors: string[] }): Promise<StepOutput> {
    const own = await store.getSources(input.researchId, input.sourceIds);
    const deps_ = await dependencyBlock(input.researchId, input.dependencyKeys);
    return citedDocument({
      researchId: input.researchId,
      key: input.key,
      kind: 'step',
      role: 'researcher',
      prompt: 'researcher',
      vars: { ...stepVars(input, deps_.text), sources: sourcesBlock(own), searchErrors: input.searchErrors.join('\n') || '(none)' },
      untrustedVars: ['question', 'sources', 'dependencies'],
      sources: [...own, ...deps_.sources],
      meta: { stepId: input.step.id },
    });
  }

  async function analyzeStep(input: { researchId: string; key: string; question: string; locale: string; step: PlanStep; dependencyKeys: string[]; feedback: string }): Promise<StepOutput> {
    const deps_ = await dependencyBlock(input.researchId, input.dependencyKeys);
    return citedDocument({
      researchId: input.researchId,
      key: input.key,
      kind: 'step',
      role: 'coder',
      prompt: 'analyst',
      vars: stepVars(input, deps_.text),
      untrustedVars: ['question', 'dependencies'],
      sources: deps_.sources,
      meta: { stepId: input.step.id },
    });
  }

  async function judgeStep(input: { researchId: string; key: string; step: PlanStep; question: string }): Promise<{ verdict: JudgeVerdict; usage: Usage }> {
    const [doc] = await store.getDocuments(input.researchId, [input.key]);
    if (!doc) throw ApplicationFailure.nonRetryable(`no step result stored under ${input.key}`, ErrorType.NotFound);
    const r = await call({
      researchId: input.researchId,
      role: 'judge',
      prompt: 'judge',
      schema: 'JudgeVerdict',
      vars: { question: input.question, stepTitle: input.step.title, stepDescription: input.step.description, result: doc.content.slice(0, DOC_CHARS), citedSources: doc.sourceIds.length },
      untrustedVars: ['question', 'result'],
    });
    return { verdict: r.output, usage: r.usage };
  }

  async function writeReport(input: { researchId: string; question: string; locale: string; stepKeys: string[]; notes: string[] }): Promise<{ title: string; summary: string; references: number; removedCitations: number[]; usage: Usage }> {
    const docs = await store.getDocuments(input.researchId, ['background', ...input.stepKeys]);
    // Reference numbers follow first citation order across the findings.
    const order: string[] = [];
    for (const d of docs) for (const id of d.sourceIds) if (!order.includes(id)) order.push(id);
    const sources = order.length ? await store.getSources(input.researchId, order) : [];
    const byId = new Map(sources.map((s) => [s.sourceId, s]));
    const refs = order.filter((id) => byId.has(id)).map((id, i) => ({ n: i + 1, sourceId: id, url: byId.get(id)!.url, title: byId.get(id)!.title }));
    const numberOf = new Map(refs.map((r) => [r.sourceId, r.n]));
    const findings = docs.map((d) => `<finding key="${d.key}">\n${sourceIdsToNumbers(d.content, numberOf).slice(0, DOC_CHARS)}\n</finding>`).join('\n') || '(no findings)';
    const refList = refs.map((r) => `[${r.n}] ${r.title} — ${r.url}`).join('\n') || '(no sources)';
    const r = await call({
      researchId: input.researchId,
      role: 'reporter',
      prompt: 'reporter',
      schema: 'ReportDraft',
      vars: { question: input.question, locale: input.locale, findings, references: refList, notes: input.notes.join('\n') || '(none)' },
      untrustedVars: ['question', 'findings', 'references'],
    });
    const checked = checkCitations(r.output.markdown, refs.length);
    // Charts from coder steps: links the model kept point at the API; every PNG is linked once.
    const artifactIds = new Set(docs.flatMap((d) => [...d.content.matchAll(/\(artifact:([A-Za-z0-9._-]+)\)/g)].map((m) => m[1]!)));
    const artifactUrl = (id: string) => `/v1/research/${encodeURIComponent(input.researchId)}/artifacts/${encodeURIComponent(id)}`;
    const body = checked.markdown.replace(/\(artifact:([A-Za-z0-9._-]+)\)/g, (_m, id: string) => (artifactIds.has(id) ? `(${artifactUrl(id)})` : '(#)'));
    const charts = [...artifactIds].filter((id) => id.toLowerCase().endsWith('.png') && !body.includes(artifactUrl(id)));
    const chartMd = charts.length ? `\n\n## Charts\n\n${charts.map((id) => `![${id}](${artifactUrl(id)})`).join('\n\n')}` : '';
    const noteBlock = input.notes.length ? `\n\n> ${input.notes.join('\n> ')}\n` : '';
    const refMd = refs.length ? `\n\n## References\n\n${refs.map((x) => `${x.n}. [${x.title.replace(/[[\]]/g, '')}](${x.url})`).join('\n')}\n` : '';
    const markdown = `# ${r.output.title}${noteBlock}\n\n${body.trim()}${chartMd}${refMd}`;
    await store.saveReport({ researchId: input.researchId, title: r.output.title, locale: input.locale, markdown, references: refs, removedCitations: checked.removed });
    return { title: summarize(r.output.title, 200), summary: summarize(checked.markdown, 300), references: refs.length, removedCitations: checked.removed.slice(0, 50), usage: r.usage };
  }

  return { classifyRequest, expandQueries, webSearch, writeBackground, planResearch, summarizeStep, analyzeStep, judgeStep, writeReport };
}
