// What a run retrieved and wrote, kept out of Temporal's history: sources, documents (the
// background brief and step results), page cache, artifacts and the report. Writes are upserts.
import type pg from 'pg';
import type { Grounding } from '../../shared/messages';
import type { CitationCheckRecord, Reference, RemovedLink } from '../../shared/report';
import { legacyDoc, type ReportDoc } from '../../shared/report-doc';
import { SNIPPET_PROVIDERS } from '../../shared/source-kinds';
import type { ReportLength } from '../../shared/schemas';

export interface StoredSource {
  sourceId: string;
  url: string;
  title: string;
  content: string;
  provider: string;
  /** Publication date (`YYYY-MM-DD`) where the provider or the page said. */
  published?: string | undefined;
}

export interface StoredDocument {
  key: string;
  kind: string;
  content: string;
  summary: string;
  sourceIds: string[];
  meta: Record<string, unknown>;
}

export interface StoredPage {
  finalUrl: string;
  title: string;
  markdown: string;
  contentType: string;
  /** Publication date (`YYYY-MM-DD`) the page states in its markup, when it does. */
  published?: string | undefined;
}

export interface ReportRecord {
  researchId: string;
  title: string;
  locale: string;
  /** The report as data; a report stored before it is read as legacyDoc of its Markdown. */
  doc: ReportDoc;
  /** reportMarkdown(doc), as stored. */
  markdown: string;
  references: Reference[];
  removedCitations: number[];
  /** Absent in reports written before links were checked. */
  removedLinks?: RemovedLink[];
  /** Absent in reports written before claims were checked. */
  grounding?: Grounding;
  citationChecks?: CitationCheckRecord[];
  /** Absent or 1: the run's own report; 2 and up: a rewrite (report_versions). */
  version?: number | undefined;
  /** What the run's own report was written from; a rewrite reads it (kept by the first write that gives it). */
  basis?: ReportBasis | undefined;
}

/** What a run's own report was written from: a rewrite of it reads the same. */
export interface ReportBasis {
  question: string;
  stepKeys: string[];
  notes: string[];
  /** The report's length (long: written section by section); absent in bases kept before it was. */
  length?: ReportLength | undefined;
}

export interface ArtifactRecord {
  artifactId: string;
  stepId: string;
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** What the upsert below makes of a stored source and a new write of it (kept in step with its SQL). */
export function mergeSource(stored: StoredSource, next: StoredSource): StoredSource {
  return {
    ...stored,
    content: next.provider === 'crawl' || next.content.length > stored.content.length ? next.content : stored.content,
    provider: next.provider === 'crawl' ? 'crawl' : stored.provider,
    title: stored.title === '' ? next.title : stored.title,
    published: next.published ?? stored.published,
  };
}

export function documentTables(pool: pg.Pool) {
  return { ...sourcesTable(pool), ...documentsTable(pool), ...pagesTable(pool), ...artifactsTable(pool), ...reportsTable(pool) };
}
export type DocumentTables = ReturnType<typeof documentTables>;

function sourcesTable(pool: pg.Pool) {
  return {
    /** Upserts a batch in one statement; a source met twice in it is merged first, as two writes would be. */
    async saveSources(researchId: string, sources: StoredSource[]): Promise<void> {
      const merged = new Map<string, StoredSource>();
      for (const s of sources) {
        const was = merged.get(s.sourceId);
        merged.set(s.sourceId, was ? mergeSource(was, s) : s);
      }
      if (!merged.size) return;
      const rows = [...merged.values()];
      await pool.query(
        `INSERT INTO sources (research_id, source_id, url, title, content, provider, published)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[])
         ON CONFLICT (research_id, source_id) DO UPDATE SET
           -- A page read for a goal says more than a search snippet: crawled evidence wins.
           content = CASE WHEN EXCLUDED.provider = 'crawl' OR length(EXCLUDED.content) > length(sources.content)
                          THEN EXCLUDED.content ELSE sources.content END,
           provider = CASE WHEN EXCLUDED.provider = 'crawl' THEN 'crawl' ELSE sources.provider END,
           title = CASE WHEN sources.title = '' THEN EXCLUDED.title ELSE sources.title END,
           published = COALESCE(EXCLUDED.published, sources.published)`,
        [
          researchId,
          rows.map((r) => r.sourceId),
          rows.map((r) => r.url),
          rows.map((r) => r.title),
          rows.map((r) => r.content),
          rows.map((r) => r.provider),
          rows.map((r) => r.published ?? null),
        ],
      );
    },
    /** A search hit's source read after all (its address redirected to a page the run read): it
     *  takes the reading's text and counts as read. Other sources are left as they are. */
    async markSnippetRead(researchId: string, sourceId: string, content: string): Promise<void> {
      await pool.query(
        `UPDATE sources SET provider = 'crawl', content = $3 WHERE research_id = $1 AND source_id = $2 AND provider = ANY($4)`,
        [researchId, sourceId, content, [...SNIPPET_PROVIDERS]],
      );
    },
    /** The publication date a read page states, on its source. */
    async setPublished(researchId: string, sourceId: string, published: string): Promise<void> {
      await pool.query('UPDATE sources SET published = $3 WHERE research_id = $1 AND source_id = $2', [researchId, sourceId, published]);
    },
    async getSources(researchId: string, ids?: string[]): Promise<StoredSource[]> {
      const { rows } = await pool.query<{
        source_id: string;
        url: string;
        title: string;
        content: string;
        provider: string;
        published: string | null;
      }>(
        `SELECT source_id, url, title, content, provider, published::text AS published FROM sources WHERE research_id = $1 ${ids ? 'AND source_id = ANY($2)' : ''} ORDER BY first_seq`,
        ids ? [researchId, ids] : [researchId],
      );
      return rows.map((r) => ({
        sourceId: r.source_id,
        url: r.url,
        title: r.title,
        content: r.content,
        provider: r.provider,
        ...(r.published ? { published: r.published } : {}),
      }));
    },
  };
}

function documentsTable(pool: pg.Pool) {
  /** A run's documents that `where` (on $2 and after) picks. */
  async function selectDocuments(where: string, values: unknown[]): Promise<StoredDocument[]> {
    const { rows } = await pool.query<{
      key: string;
      kind: string;
      content: string;
      summary: string;
      source_ids: string[];
      meta: Record<string, unknown>;
    }>(`SELECT key, kind, content, summary, source_ids, meta FROM documents WHERE research_id = $1 AND ${where}`, values);
    return rows.map((r) => ({ key: r.key, kind: r.kind, content: r.content, summary: r.summary, sourceIds: r.source_ids, meta: r.meta }));
  }
  return {
    async saveDocument(researchId: string, doc: StoredDocument): Promise<void> {
      await pool.query(
        `INSERT INTO documents (research_id, key, kind, content, summary, source_ids, meta) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (research_id, key) DO UPDATE SET content = EXCLUDED.content, summary = EXCLUDED.summary,
           source_ids = EXCLUDED.source_ids, meta = EXCLUDED.meta`,
        [researchId, doc.key, doc.kind, doc.content, doc.summary, doc.sourceIds, JSON.stringify(doc.meta)],
      );
    },
    /** The documents under `keys` that exist, in the order of `keys`. */
    async getDocuments(researchId: string, keys: string[]): Promise<StoredDocument[]> {
      const docs = await selectDocuments('key = ANY($2)', [researchId, keys]);
      const byKey = new Map(docs.map((d) => [d.key, d]));
      return keys.map((k) => byKey.get(k)).filter((d): d is StoredDocument => d !== undefined);
    },
    /** The documents of one kind, in key order (e.g. the notes of the fallbacks a run took). */
    async getDocumentsOfKind(researchId: string, kind: string): Promise<StoredDocument[]> {
      return selectDocuments('kind = $2 ORDER BY key', [researchId, kind]);
    },
  };
}

/** The page cache: the pages a run has read, by the hash of their URL and by their final URL. */
function pagesTable(pool: pg.Pool) {
  return {
    async getPage(researchId: string, urlHash: string): Promise<StoredPage | undefined> {
      const { rows } = await pool.query(
        'SELECT final_url, title, markdown, content_type, published::text AS published FROM pages WHERE research_id = $1 AND url_hash = $2',
        [researchId, urlHash],
      );
      const r = rows[0];
      return r
        ? {
            finalUrl: r.final_url,
            title: r.title,
            markdown: r.markdown,
            contentType: r.content_type,
            ...(r.published ? { published: r.published } : {}),
          }
        : undefined;
    },
    /** The final URLs (after redirects) of the pages a run has read: a crawled source's id is made from one. */
    async pageFinalUrls(researchId: string): Promise<string[]> {
      const { rows } = await pool.query<{ final_url: string }>('SELECT DISTINCT final_url FROM pages WHERE research_id = $1', [researchId]);
      return rows.map((r) => r.final_url);
    },
    async getPageByFinalUrl(researchId: string, finalUrl: string): Promise<StoredPage | undefined> {
      const { rows } = await pool.query(
        'SELECT final_url, title, markdown, content_type FROM pages WHERE research_id = $1 AND final_url = $2 ORDER BY length(markdown) DESC LIMIT 1',
        [researchId, finalUrl],
      );
      const r = rows[0];
      return r ? { finalUrl: r.final_url, title: r.title, markdown: r.markdown, contentType: r.content_type } : undefined;
    },
    async savePage(researchId: string, p: StoredPage & { urlHash: string; url: string }): Promise<void> {
      await pool.query(
        `INSERT INTO pages (research_id, url_hash, url, final_url, content_type, title, markdown, published) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (research_id, url_hash) DO NOTHING`,
        [researchId, p.urlHash, p.url, p.finalUrl, p.contentType, p.title, p.markdown, p.published ?? null],
      );
    },
  };
}

function artifactsTable(pool: pg.Pool) {
  return {
    async saveArtifact(researchId: string, a: ArtifactRecord): Promise<void> {
      await pool.query(
        `INSERT INTO artifacts (research_id, artifact_id, step_id, name, content_type, bytes, size)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (research_id, artifact_id) DO UPDATE SET bytes = EXCLUDED.bytes, size = EXCLUDED.size, content_type = EXCLUDED.content_type`,
        [researchId, a.artifactId, a.stepId, a.name, a.contentType, a.bytes, a.bytes.length],
      );
    },
    async listArtifacts(
      researchId: string,
    ): Promise<{ artifactId: string; stepId: string; name: string; contentType: string; size: number }[]> {
      const { rows } = await pool.query(
        'SELECT artifact_id, step_id, name, content_type, size FROM artifacts WHERE research_id = $1 ORDER BY created_at, artifact_id',
        [researchId],
      );
      return rows.map((r) => ({ artifactId: r.artifact_id, stepId: r.step_id, name: r.name, contentType: r.content_type, size: r.size }));
    },
    async getArtifact(researchId: string, artifactId: string): Promise<{ name: string; contentType: string; bytes: Buffer } | undefined> {
      const { rows } = await pool.query('SELECT name, content_type, bytes FROM artifacts WHERE research_id = $1 AND artifact_id = $2', [
        researchId,
        artifactId,
      ]);
      const r = rows[0];
      return r ? { name: r.name, contentType: r.content_type, bytes: r.bytes } : undefined;
    },
  };
}

/** The report columns as a row of reports or report_versions has them. */
function reportOf(researchId: string, r: Record<string, unknown>): ReportRecord {
  return {
    researchId,
    title: r.title as string,
    locale: r.locale as string,
    doc: (r.doc as ReportDoc | null) ?? legacyDoc(r.title as string, r.markdown as string),
    markdown: r.markdown as string,
    references: r.references_ as Reference[],
    removedCitations: r.removed_citations as number[],
    removedLinks: (r.removed_links as RemovedLink[] | null) ?? [],
    ...(r.grounding ? { grounding: r.grounding as Grounding } : {}),
    citationChecks: (r.citation_checks as CitationCheckRecord[] | null) ?? [],
  };
}

const REPORT_COLUMNS = 'title, locale, markdown, references_, removed_citations, removed_links, grounding, citation_checks, doc';

function reportsTable(pool: pg.Pool) {
  return {
    async saveReport(r: ReportRecord): Promise<void> {
      const values = [
        r.researchId,
        r.title,
        r.locale,
        r.markdown,
        JSON.stringify(r.references),
        JSON.stringify(r.removedCitations),
        JSON.stringify(r.removedLinks ?? []),
        r.grounding ? JSON.stringify(r.grounding) : null,
        JSON.stringify(r.citationChecks ?? []),
        JSON.stringify(r.doc),
      ];
      if (r.version !== undefined && r.version > 1) {
        // A rewrite's row exists from its request on (allocated by the API).
        await pool.query(
          `UPDATE report_versions SET title = $2, locale = $3, markdown = $4, references_ = $5, removed_citations = $6,
             removed_links = $7, grounding = $8, citation_checks = $9, doc = $10, updated_at = now()
           WHERE research_id = $1 AND version = $11`,
          [...values, r.version],
        );
        return;
      }
      await pool.query(
        `INSERT INTO reports (research_id, ${REPORT_COLUMNS}, basis)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (research_id) DO UPDATE SET title = EXCLUDED.title, locale = EXCLUDED.locale, markdown = EXCLUDED.markdown,
           references_ = EXCLUDED.references_, removed_citations = EXCLUDED.removed_citations, removed_links = EXCLUDED.removed_links,
           grounding = EXCLUDED.grounding, citation_checks = EXCLUDED.citation_checks, doc = EXCLUDED.doc, created_at = now(),
           basis = COALESCE(reports.basis, EXCLUDED.basis)`,
        [...values, r.basis ? JSON.stringify(r.basis) : null],
      );
    },
    /** The run's own report (version 1), or a rewrite's once it has been written. */
    async getReport(researchId: string, version?: number): Promise<ReportRecord | undefined> {
      const rewrite = version !== undefined && version > 1;
      const { rows } = await pool.query(
        rewrite
          ? `SELECT ${REPORT_COLUMNS} FROM report_versions WHERE research_id = $1 AND version = $2 AND markdown IS NOT NULL`
          : `SELECT ${REPORT_COLUMNS} FROM reports WHERE research_id = $1`,
        rewrite ? [researchId, version] : [researchId],
      );
      const r = rows[0];
      return r ? reportOf(researchId, r) : undefined;
    },
    /** What the run's own report was written from, as stored with it (runs from before: undefined). */
    async getReportBasis(researchId: string): Promise<ReportBasis | undefined> {
      const { rows } = await pool.query<{ basis: ReportBasis | null }>('SELECT basis FROM reports WHERE research_id = $1', [researchId]);
      return rows[0]?.basis ?? undefined;
    },
  };
}
