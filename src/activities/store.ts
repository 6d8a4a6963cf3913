// PostgreSQL store. Every write is an upsert keyed by a stable id, so an activity that runs twice
// (a retry after a lost completion) leaves one row, not two.
import type pg from 'pg';
import type { RunStatus, Usage } from '../shared/schemas';

export interface LlmCallRecord {
  callKey: string;
  researchId: string;
  role: string;
  model: string;
  promptName: string;
  response: unknown;
  usage: Usage;
  durationMs: number;
}

export interface LlmCallStore {
  findCall(callKey: string): Promise<{ model: string; response: unknown; usage: Usage } | undefined>;
  recordCall(call: LlmCallRecord): Promise<void>;
}

export interface RunRecord {
  id: string;
  tenant: string;
  question: string;
  status: RunStatus;
  phase?: string | undefined;
  plan?: unknown;
  planVersion?: number | undefined;
  outcome?: string | undefined;
  locale?: string | undefined;
  answer?: string | undefined;
  error?: string | undefined;
  usage: Usage;
}

export function createLlmCallStore(pool: pg.Pool): LlmCallStore {
  return {
    async findCall(callKey) {
      const { rows } = await pool.query<{ model: string; response: unknown; prompt_tokens: number; completion_tokens: number; cost_usd: string }>(
        'SELECT model, response, prompt_tokens, completion_tokens, cost_usd FROM llm_calls WHERE call_key = $1',
        [callKey],
      );
      const r = rows[0];
      if (!r) return undefined;
      return {
        model: r.model,
        response: r.response,
        usage: { promptTokens: r.prompt_tokens, completionTokens: r.completion_tokens, costUsd: Number(r.cost_usd) },
      };
    },
    async recordCall(c) {
      await pool.query(
        `INSERT INTO llm_calls (call_key, research_id, role, model, prompt_name, response, prompt_tokens, completion_tokens, cost_usd, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (call_key) DO NOTHING`,
        [c.callKey, c.researchId, c.role, c.model, c.promptName, JSON.stringify(c.response), c.usage.promptTokens, c.usage.completionTokens, c.usage.costUsd, c.durationMs],
      );
    },
  };
}

export function createStoreActivities(deps: { pool: pg.Pool }) {
  async function recordRun(run: RunRecord): Promise<void> {
    const terminal = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled';
    await deps.pool.query(
      `INSERT INTO research_runs (id, tenant, question, status, outcome, locale, answer, error, prompt_tokens, completion_tokens, cost_usd, completed_at, phase, plan, plan_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $12 THEN now() END, $13, $14, $15)
       ON CONFLICT (id) DO UPDATE SET
         status = EXCLUDED.status, outcome = COALESCE(EXCLUDED.outcome, research_runs.outcome),
         locale = COALESCE(EXCLUDED.locale, research_runs.locale), answer = COALESCE(EXCLUDED.answer, research_runs.answer),
         phase = COALESCE(EXCLUDED.phase, research_runs.phase), plan = COALESCE(EXCLUDED.plan, research_runs.plan),
         plan_version = COALESCE(EXCLUDED.plan_version, research_runs.plan_version),
         error = EXCLUDED.error, prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
         cost_usd = EXCLUDED.cost_usd, updated_at = now(),
         completed_at = COALESCE(research_runs.completed_at, EXCLUDED.completed_at)`,
      [
        run.id, run.tenant, run.question, run.status, run.outcome ?? null, run.locale ?? null, run.answer ?? null,
        run.error ?? null, run.usage.promptTokens, run.usage.completionTokens, run.usage.costUsd, terminal,
        run.phase ?? null, run.plan === undefined ? null : JSON.stringify(run.plan), run.planVersion ?? null,
      ],
    );
  }
  return { recordRun };
}

export interface StoredSource {
  sourceId: string;
  url: string;
  title: string;
  content: string;
  provider: string;
}

export interface StoredDocument {
  key: string;
  kind: string;
  content: string;
  summary: string;
  sourceIds: string[];
  meta: Record<string, unknown>;
}

export interface ReportRecord {
  researchId: string;
  title: string;
  locale: string;
  markdown: string;
  references: { n: number; sourceId: string; url: string; title: string }[];
  removedCitations: number[];
}

/** Reads and writes of a run's sources, documents and report. All writes are idempotent. */
export function createResearchStore(pool: pg.Pool) {
  return {
    async saveSources(researchId: string, sources: StoredSource[]): Promise<void> {
      for (const s of sources) {
        await pool.query(
          `INSERT INTO sources (research_id, source_id, url, title, content, provider) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (research_id, source_id) DO UPDATE SET
             -- A page read for a goal says more than a search snippet: crawled evidence wins.
             content = CASE WHEN EXCLUDED.provider = 'crawl' OR length(EXCLUDED.content) > length(sources.content) THEN EXCLUDED.content ELSE sources.content END,
             provider = CASE WHEN EXCLUDED.provider = 'crawl' THEN 'crawl' ELSE sources.provider END,
             title = CASE WHEN sources.title = '' THEN EXCLUDED.title ELSE sources.title END`,
          [researchId, s.sourceId, s.url, s.title, s.content, s.provider],
        );
      }
    },
    async getSources(researchId: string, ids?: string[]): Promise<StoredSource[]> {
      const { rows } = await pool.query<{ source_id: string; url: string; title: string; content: string; provider: string }>(
        `SELECT source_id, url, title, content, provider FROM sources WHERE research_id = $1 ${ids ? 'AND source_id = ANY($2)' : ''} ORDER BY first_seq`,
        ids ? [researchId, ids] : [researchId],
      );
      return rows.map((r) => ({ sourceId: r.source_id, url: r.url, title: r.title, content: r.content, provider: r.provider }));
    },
    async saveDocument(researchId: string, doc: StoredDocument): Promise<void> {
      await pool.query(
        `INSERT INTO documents (research_id, key, kind, content, summary, source_ids, meta) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (research_id, key) DO UPDATE SET content = EXCLUDED.content, summary = EXCLUDED.summary,
           source_ids = EXCLUDED.source_ids, meta = EXCLUDED.meta`,
        [researchId, doc.key, doc.kind, doc.content, doc.summary, doc.sourceIds, JSON.stringify(doc.meta)],
      );
    },
    async getDocuments(researchId: string, keys: string[]): Promise<StoredDocument[]> {
      const { rows } = await pool.query<{ key: string; kind: string; content: string; summary: string; source_ids: string[]; meta: Record<string, unknown> }>(
        'SELECT key, kind, content, summary, source_ids, meta FROM documents WHERE research_id = $1 AND key = ANY($2)',
        [researchId, keys],
      );
      const byKey = new Map(rows.map((r) => [r.key, { key: r.key, kind: r.kind, content: r.content, summary: r.summary, sourceIds: r.source_ids, meta: r.meta }]));
      return keys.map((k) => byKey.get(k)).filter((d): d is StoredDocument => d !== undefined);
    },
    async getPage(researchId: string, urlHash: string): Promise<{ finalUrl: string; title: string; markdown: string; contentType: string } | undefined> {
      const { rows } = await pool.query('SELECT final_url, title, markdown, content_type FROM pages WHERE research_id = $1 AND url_hash = $2', [researchId, urlHash]);
      const r = rows[0];
      return r ? { finalUrl: r.final_url, title: r.title, markdown: r.markdown, contentType: r.content_type } : undefined;
    },
    async savePage(researchId: string, p: { urlHash: string; url: string; finalUrl: string; contentType: string; title: string; markdown: string }): Promise<void> {
      await pool.query(
        `INSERT INTO pages (research_id, url_hash, url, final_url, content_type, title, markdown) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (research_id, url_hash) DO NOTHING`,
        [researchId, p.urlHash, p.url, p.finalUrl, p.contentType, p.title, p.markdown],
      );
    },
    async listArtifacts(researchId: string): Promise<{ artifactId: string; stepId: string; name: string; contentType: string; size: number }[]> {
      const { rows } = await pool.query(
        'SELECT artifact_id, step_id, name, content_type, size FROM artifacts WHERE research_id = $1 ORDER BY created_at, artifact_id',
        [researchId],
      );
      return rows.map((r) => ({ artifactId: r.artifact_id, stepId: r.step_id, name: r.name, contentType: r.content_type, size: r.size }));
    },
    async getArtifact(researchId: string, artifactId: string): Promise<{ name: string; contentType: string; bytes: Buffer } | undefined> {
      const { rows } = await pool.query('SELECT name, content_type, bytes FROM artifacts WHERE research_id = $1 AND artifact_id = $2', [researchId, artifactId]);
      const r = rows[0];
      return r ? { name: r.name, contentType: r.content_type, bytes: r.bytes } : undefined;
    },
    async saveReport(r: ReportRecord): Promise<void> {
      await pool.query(
        `INSERT INTO reports (research_id, title, locale, markdown, references_, removed_citations) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (research_id) DO UPDATE SET title = EXCLUDED.title, locale = EXCLUDED.locale, markdown = EXCLUDED.markdown,
           references_ = EXCLUDED.references_, removed_citations = EXCLUDED.removed_citations, created_at = now()`,
        [r.researchId, r.title, r.locale, r.markdown, JSON.stringify(r.references), JSON.stringify(r.removedCitations)],
      );
    },
    async getReport(researchId: string): Promise<ReportRecord | undefined> {
      const { rows } = await pool.query('SELECT title, locale, markdown, references_, removed_citations FROM reports WHERE research_id = $1', [researchId]);
      const r = rows[0];
      if (!r) return undefined;
      return { researchId, title: r.title, locale: r.locale, markdown: r.markdown, references: r.references_, removedCitations: r.removed_citations };
    },
  };
}
export type ResearchStore = ReturnType<typeof createResearchStore>;
