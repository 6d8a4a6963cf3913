// A scripted LLM that plays every role of a research run, answering from the request so that
// citations point at the sources the run really retrieved. Tests override single roles.
import { bySchema, type ChatRequest, type Reply, type Rule } from './llm-server';
import type { SearxResult } from './search-server';

/** A research step about solar costs, as the researcher's tests give it. */
export const SOLAR_STEP = {
  id: 'costs',
  title: 'Solar cost decline',
  description: 'Find how far solar costs fell',
  type: 'research' as const,
  needSearch: true,
  dependsOn: [],
};

/** What the model was given to read: the user's messages and the tools' results (a conversation's
 *  findings are asked at its end, with its tool results before them). */
export const userText = (req: ChatRequest) =>
  req.messages
    .filter((m) => m.role === 'user' || m.role === 'tool')
    .map((m) => m.content ?? '')
    .join('\n');
/** What the tools returned in a conversation (the compressor asks for findings at its end). */
export const toolText = (req: ChatRequest) =>
  req.messages
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '')
    .join('\n');
export const sourceIdsIn = (req: ChatRequest) => [...userText(req).matchAll(/<source id="(S[0-9a-f]{8})"/g)].map((m) => m[1]!);
/** The step a request is for: the researcher's, compressor's and judge's user message names it
 *  first, the coder's system prompt. */
export const stepTitleOf = (req: ChatRequest) =>
  /^Step: (.*)/m.exec(`${userText(req)}\n${req.messages[0]?.role === 'system' ? (req.messages[0].content ?? '') : ''}`)?.[1] ?? '';

export interface PlanSpec {
  id: string;
  type?: 'research' | 'processing';
  dependsOn?: string[];
}

export function planJson(steps: PlanSpec[], extra: Partial<{ hasEnoughContext: boolean; title: string }> = {}) {
  return {
    title: extra.title ?? 'Solar cost research plan',
    thought: 'Find the figures, then compare them.',
    locale: 'en-US',
    hasEnoughContext: extra.hasEnoughContext ?? false,
    steps: steps.map((s) => ({
      id: s.id,
      title: `Step ${s.id}`,
      description: `Find facts for step ${s.id}`,
      type: s.type ?? 'research',
      needSearch: (s.type ?? 'research') === 'research',
      dependsOn: s.dependsOn ?? [],
    })),
  };
}

/** `researcher` answers the step's final findings (the compressor); `react` the tool-using turns. */
export type RoleOverrides = Partial<
  Record<
    | 'coordinator'
    | 'rewrite'
    | 'extractor'
    | 'knowledgeRouter'
    | 'background'
    | 'planner'
    | 'react'
    | 'researcher'
    | 'coder'
    | 'analyst'
    | 'judge'
    | 'reporter'
    | 'gaps'
    | 'verify'
    | 'outline'
    | 'section'
    | 'changes'
    | 'supervisor'
    | 'memory',
    Rule['reply']
  >
>;

/** The claims and evidence of a claim-check request, by claim id. */
export function claimsIn(req: ChatRequest): { id: string; claim: string; evidence: string }[] {
  const text = userText(req);
  return [...text.matchAll(/<claim id="(c\d+)">\n([\s\S]*?)\n<\/claim>\n<evidence for="\1"[^>]*>\n([\s\S]*?)\n<\/evidence>/g)].map((m) => ({
    id: m[1]!,
    claim: m[2]!,
    evidence: m[3]!,
  }));
}

/** A claim checker that finds every claim supported. */
export const supportEveryClaim = (req: ChatRequest): Reply => ({
  json: { verdicts: claimsIn(req).map((c) => ({ id: c.id, verdict: 'supported', reason: 'The evidence states it.' })) },
});

/** Finding keys in a reporter request, in order. */
export const findingKeysIn = (req: ChatRequest) => [...userText(req).matchAll(/<finding key="([^"]+)">/g)].map((m) => m[1]!);

/** A long report's outline: key points from the background, one section per two step findings,
 *  conclusions from all of them. */
export const defaultOutline = (req: ChatRequest): Reply => {
  const keys = findingKeysIn(req);
  const steps = keys.filter((k) => k !== 'background');
  const middle: { heading: string; covers: string; findings: string[] }[] = [];
  for (let i = 0; i < steps.length; i += 2) {
    middle.push({
      heading: `Part ${middle.length + 1}`,
      covers: `What ${steps.slice(i, i + 2).join(' and ')} found.`,
      findings: steps.slice(i, i + 2),
    });
  }
  return {
    json: {
      title: 'A long report',
      sections: [
        { heading: 'Key points', covers: 'The answer in brief.', findings: ['background'] },
        ...middle,
        { heading: 'Conclusions', covers: 'What follows.', findings: keys },
      ],
    },
  };
};

/** A section that cites every reference it was given and names the findings it saw. */
export const defaultSection = (req: ChatRequest): Reply => {
  const heading = /Your section: \*\*(.*?)\*\*/.exec(userText(req))?.[1] ?? '?';
  const refs = [...userText(req).matchAll(/^\[(\d+)\] /gm)].map((m) => Number(m[1]));
  return {
    json: { markdown: `Section ${heading} draws on ${findingKeysIn(req).join(', ')}. Costs fell ${refs.map((n) => `[${n}]`).join('')}.` },
  };
};

/** A program that reads the step's input files, prints a table and saves a chart. */
export const DEFAULT_PROGRAM = [
  'import glob',
  'import matplotlib.pyplot as plt',
  "files = sorted(glob.glob('/work/*.md'))",
  "print('input files:', len(files))",
  'years, usd = [2010, 2016, 2022], [0.445, 0.129, 0.049]',
  "print('| year | usd/kWh |')",
  "for y, u in zip(years, usd): print(f'| {y} | {u} |')",
  "plt.plot(years, usd, marker='o'); plt.title('Solar LCOE'); plt.savefig('/output/lcoe.png', dpi=80)",
].join('\n');

/** A ReAct researcher that searches for its step title once, reads the first result, then answers. */
export const defaultReact = (req: ChatRequest): Reply => {
  const toolResults = req.messages.filter((m) => m.role === 'tool').length;
  if (toolResults === 0) return { toolCalls: [{ name: 'web_search', arguments: { queries: [stepTitleOf(req)] } }] };
  if (toolResults === 1) {
    const url = /— (http\S+)/.exec(String(req.messages.at(-1)?.content ?? ''))?.[1];
    if (url) return { toolCalls: [{ name: 'crawl', arguments: { urls: [url], goal: stepTitleOf(req) } }] };
  }
  return { content: 'I have what I need.' };
};

export function researchRules(o: RoleOverrides = {}, plan = planJson([{ id: 'a' }, { id: 'b' }])): Rule[] {
  const cited = (req: ChatRequest): Reply => {
    const ids = sourceIdsIn(req);
    // A conversation's tool results first: the ids its step retrieved.
    const deps = [...`${toolText(req)}\n${userText(req)}`.matchAll(/\[(S[0-9a-f]{8})\]/g)].map((m) => m[1]!);
    const cite = [...new Set([...ids, ...deps])].slice(0, 2);
    return {
      json: {
        text: `Costs fell ${cite.map((id) => `[${id}]`).join('')}. ${stepTitleOf(req)}`,
        summary: `Findings for ${stepTitleOf(req) || 'background'}.`,
      },
    };
  };
  return [
    {
      name: 'coordinator',
      match: bySchema('CoordinatorDecision'),
      reply: o.coordinator ?? {
        json: { action: 'research', locale: 'en-US', directAnswer: null, researchTopic: 'Solar cost decline', clarificationQuestion: null },
      },
    },
    {
      name: 'rewrite',
      match: bySchema('QueryExpansion'),
      reply: o.rewrite ?? {
        json: { researchQuestion: 'How far did solar costs fall 2010-2022?', queries: ['solar cost', 'solar lcoe', 'pv module price'] },
      },
    },
    {
      name: 'extractor',
      match: bySchema('PageExtract'),
      reply: o.extractor ?? {
        json: { relevant: true, evidence: 'Solar LCOE fell 89% from 2010 to 2022.', summary: 'Solar got much cheaper.' },
      },
    },
    { name: 'background', match: bySchema('BackgroundBrief'), reply: o.background ?? cited },
    { name: 'planner', match: bySchema('Plan'), reply: o.planner ?? { json: plan } },
    // The supervisor calls tools too: told apart by its own.
    {
      name: 'supervisor',
      match: (r) => r.tools?.some((t) => t.function.name === 'conduct_research') ?? false,
      reply: o.supervisor ?? { toolCalls: [{ name: 'research_complete', arguments: { reason: 'The findings answer the question.' } }] },
    },
    { name: 'react', match: (r) => r.response_format === undefined, reply: o.react ?? defaultReact },
    { name: 'researcher', match: bySchema('ResearchFindings'), reply: o.researcher ?? cited },
    {
      name: 'coder',
      match: bySchema('CodeDraft'),
      reply: o.coder ?? { json: { code: DEFAULT_PROGRAM, explanation: 'Tabulates the cost figures and plots them.' } },
    },
    { name: 'analyst', match: bySchema('CodeFindings'), reply: o.analyst ?? cited },
    { name: 'judge', match: bySchema('JudgeVerdict'), reply: o.judge ?? { json: { passed: true, feedback: '' } } },
    { name: 'outline', match: bySchema('ReportOutline'), reply: o.outline ?? defaultOutline },
    { name: 'section', match: bySchema('ReportSection'), reply: o.section ?? defaultSection },
    { name: 'verify', match: bySchema('CitationVerdicts'), reply: o.verify ?? supportEveryClaim },
    { name: 'changes', match: bySchema('ReportChanges'), reply: o.changes ?? { json: { changes: [] } } },
    // The user memory's learning step after the report: by default the run teaches nothing.
    { name: 'memory', match: bySchema('UserFacts'), reply: o.memory ?? { json: { facts: [] } } },
    { name: 'gaps', match: bySchema('GapReflection'), reply: o.gaps ?? { json: { answered: true, gaps: [], followUpSteps: [] } } },
    // A tenant that has collections (other test files give the shared tenants some) gets the
    // knowledge router's question: none of them is about the test's question unless it says so.
    {
      name: 'knowledge-router',
      match: bySchema('KnowledgeChoice'),
      reply: o.knowledgeRouter ?? { json: { collectionIds: [], reason: 'No collection is about this question.' } },
    },
    {
      name: 'reporter',
      match: bySchema('ReportDraft'),
      reply: o.reporter ?? { json: { title: 'Solar costs', markdown: '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].' } },
    },
  ];
}

/** Search results: two fixture pages per query, URLs distinct per query. */
export function searchResults(siteUrl: string) {
  return (q: string): SearxResult[] => {
    const slug = encodeURIComponent(q.toLowerCase().replace(/\s+/g, '-'));
    return [
      {
        url: `${siteUrl}/articles/solar-costs.html?q=${slug}`,
        title: `Solar costs (${q})`,
        content: `Solar LCOE fell 89% from 2010 to 2022 (${q}).`,
      },
      {
        url: `${siteUrl}/articles/battery-storage.html?q=${slug}`,
        title: `Battery prices (${q})`,
        content: `Battery packs cost 139 USD/kWh in 2023 (${q}).`,
      },
    ];
  };
}
