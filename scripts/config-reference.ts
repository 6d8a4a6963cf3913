// Renders the configuration reference in docs/configuration.md from the env schema in src/config.ts:
// each variable's default comes from the schema and its meaning from the field's .describe(), so
// the table cannot drift from the code. `--check` only compares (test/unit/docs.test.ts does too).
// A description is Markdown; its relative links are relative to docs/.
//
//   node bin/run-ts.mjs scripts/config-reference.ts [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { EnvSchema } from '../src/config';
import { LLM_ROLES } from '../src/shared/constants';

export const CONFIG_DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
export const REGENERATE = 'node bin/run-ts.mjs scripts/config-reference.ts';
const START = '<!-- config-reference:start (generated from src/config.ts by scripts/config-reference.ts; do not edit) -->';
const END = '<!-- config-reference:end -->';

/** Sections in the order a reader looks for them. A name ending in `*` is a prefix; an exact name
 *  wins over a prefix, a longer prefix over a shorter one. Within a section, rows follow the order
 *  of the patterns, then the schema's. */
const SECTIONS: { title: string; match: string[] }[] = [
  {
    title: 'LLM',
    match: [
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'LLM_MODEL',
      'LLM_MODEL_*',
      'LLM_TIMEOUT_MS',
      'LLM_TIMEOUT_MS_*',
      'LLM_MAX_TOKENS_*',
      'LLM_CONTEXT_TOKENS',
      'RESEARCHER_CONTEXT_TOKENS',
      'LLM_CONTEXT_CHARS',
      'RESEARCHER_TOOL_RESULT_TOKENS',
      'LLM_TOKENIZER',
      'LLM_PRICES',
      'LLM_REWRITE_MODELS',
      'LLM_QUEUE_RATE',
      'LLM_CONCURRENCY',
      'LLM_PROVIDER_CONCURRENCY',
      'LLM_FALLBACK_*',
    ],
  },
  {
    title: 'Search',
    match: [
      'SEARCH_PROVIDERS',
      'SEARXNG_URL',
      'TAVILY_*',
      'BRAVE_*',
      'EXA_*',
      'SERPER_*',
      'WIKIPEDIA_BASE_URL',
      'OPENALEX_*',
      'ARXIV_BASE_URL',
      'PUBMED_BASE_URL',
      'NCBI_API_KEY',
      'SEMANTIC_SCHOLAR_*',
      'SEARCH_MAX_RESULTS',
      'SEARCH_TIMEOUT_MS',
      'SEARCH_RATE_LIMITS',
    ],
  },
  { title: 'Crawling and MCP tools', match: ['CRAWL_*', 'MCP_CONFIG'] },
  { title: 'Browser', match: ['BROWSER', 'BROWSER_*', 'CHROMIUM_PATH'] },
  { title: 'Sandbox', match: ['SANDBOX_*', 'DOCKER_SOCKET', 'RESEARCHER_PYTHON'] },
  { title: 'Knowledge base', match: ['EMBEDDING_*', 'KB_*'] },
  {
    title: 'Temporal',
    match: [
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'TEMPORAL_PROFILE',
      'TEMPORAL_CONFIG_FILE',
      'TEMPORAL_API_KEY',
      'TEMPORAL_TLS',
      'TEMPORAL_TLS_*',
      'TEMPORAL_WORKER_BUILD_ID',
      'NEW_BUILD_CHECK',
      'TEMPORAL_DEPLOYMENT_NAME',
      'TEMPORAL_TASK_QUEUE',
      'TEMPORAL_CLI_PATH',
      'PATH',
      'TEMPORAL_*',
    ],
  },
  { title: 'Storage', match: ['DATABASE_*', 'PGLITE_PORT', 'DATA_DIR'] },
  {
    title: 'API, tenants, schedules and webhooks',
    match: [
      'API_*',
      'RATE_LIMIT_*',
      'CHAT_COMPLETION_WAIT',
      'TENANT_*',
      'RUN_MAX_TOKENS',
      'RUN_MIN_OUTAGE',
      'SCHEDULE_*',
      'WEBHOOK_*',
      'DEEP_RESEARCH_*',
    ],
  },
  { title: 'Logs, metrics and tracing', match: ['LOG_LEVEL', 'METRICS_*', 'OTEL_*', 'NODE_ENV'] },
  {
    title: 'Workers: retries, shutdown and memory',
    match: [
      'RETRY_*',
      'LLM_HEARTBEAT_TIMEOUT',
      'WORKER_*',
      'WORKFLOW_*',
      'HEAP_GROWTH_PERCENT',
      'THREAD_SEMI_SPACE_MB',
      'MAIN_SEMI_SPACE_MB',
      'ALLOCATOR',
    ],
  },
];

export interface Variable {
  name: string;
  /** The schema's default, if it has one (a computed default is in the description). */
  default: unknown;
  description: string | undefined;
}

/** Every variable the schema reads, in schema order. */
export function schemaVariables(): Variable[] {
  return Object.entries(EnvSchema.shape).map(([name, schema]) => ({
    name,
    default: defaultOf(schema),
    description: (schema as z.ZodType).description,
  }));
}

function defaultOf(schema: z.core.$ZodType): unknown {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; in?: z.core.$ZodType };
  if (def.type === 'default') return def.defaultValue;
  if (def.type === 'pipe' && def.in) return defaultOf(def.in);
  return undefined;
}

/** Which pattern of which section a variable falls under, or undefined. */
function place(name: string): { section: number; pattern: number } | undefined {
  let best: { section: number; pattern: number; rank: number } | undefined;
  SECTIONS.forEach((s, section) =>
    s.match.forEach((p, pattern) => {
      const rank = p.endsWith('*') ? (name.startsWith(p.slice(0, -1)) ? p.length : -1) : p === name ? Infinity : -1;
      if (rank >= 0 && (!best || rank > best.rank)) best = { section, pattern, rank };
    }),
  );
  return best;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const renderDefault = (v: unknown) => (v === undefined || v === '' ? '–' : `\`${String(v)}\``);

/** The generated part of docs/configuration.md, markers included. */
export function renderReference(): string {
  const vars = schemaVariables();
  const undescribed = vars.filter((v) => !v.description).map((v) => v.name);
  if (undescribed.length) throw new Error(`no .describe() in src/config.ts for ${undescribed.join(', ')}`);
  const unplaced = vars.filter((v) => !place(v.name)).map((v) => v.name);
  if (unplaced.length) throw new Error(`no section in scripts/config-reference.ts for ${unplaced.join(', ')}`);

  // `<NAME>_<ROLE>` variables with one description and default become one `<NAME>_<ROLE>` row.
  const suffixes = LLM_ROLES.map((r) => `_${r.toUpperCase()}`);
  const rows: (Variable & { order: [number, number, number] })[] = [];
  const folded = new Set<string>();
  vars.forEach((v, index) => {
    if (folded.has(v.name)) return;
    const suffix = suffixes.find((s) => v.name.endsWith(s));
    const stem = suffix ? v.name.slice(0, -suffix.length) : undefined;
    const family = stem ? suffixes.map((s) => vars.find((w) => w.name === stem + s)) : [];
    const p = place(v.name)!;
    const order: [number, number, number] = [p.section, p.pattern, index];
    if (stem && family.every((w) => w && w.description === v.description && w.default === v.default)) {
      for (const w of family) folded.add(w!.name);
      rows.push({ ...v, name: `${stem}_<ROLE>`, order });
    } else rows.push({ ...v, order });
  });
  rows.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2]);

  const out = [START];
  SECTIONS.forEach((s, section) => {
    const mine = rows.filter((r) => r.order[0] === section);
    if (!mine.length) return;
    out.push('', `### ${s.title}`, '', '| variable | default | meaning |', '| --- | --- | --- |');
    for (const r of mine) out.push(`| \`${r.name}\` | ${cell(renderDefault(r.default))} | ${cell(r.description!)} |`);
  });
  out.push('', END);
  return out.join('\n');
}

/** The part of a document between the markers (markers included), or undefined. */
export function currentReference(doc: string): string | undefined {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  return start < 0 || end < start ? undefined : doc.slice(start, end + END.length);
}

function main(check: boolean): number {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  const current = currentReference(doc);
  if (current === undefined) {
    console.error(`${path.relative(process.cwd(), CONFIG_DOC)} has no "${START}" … "${END}" block`);
    return 1;
  }
  const fresh = renderReference();
  if (check) {
    if (current === fresh) return 0;
    console.error(`docs/configuration.md is out of date with src/config.ts; run: ${REGENERATE}`);
    return 1;
  }
  if (current !== fresh)
    writeFileSync(
      CONFIG_DOC,
      doc.replace(current, () => fresh),
    );
  console.log(current === fresh ? 'docs/configuration.md is up to date' : 'docs/configuration.md updated');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.includes('--check'));
}
