// A run's report versions past the first: rewrites of the run's own report (version 1, in the
// reports table) from the same findings. The API allocates a version when a rewrite is asked for;
// the rewrite workflow writes it and marks it ready or failed, with its own usage.
import type pg from 'pg';
import type { Usage } from '../../shared/schemas';
import { inTransaction } from './knowledge/transaction';
import { usageOfSums } from './runs';

export type VersionStatus = 'writing' | 'ready' | 'failed';

export interface ReportVersionRow {
  version: number;
  tenant: string;
  status: VersionStatus;
  options: Record<string, unknown>;
  title: string | null;
  error: string | null;
  usage: Usage;
  requestHash: string;
  createdAt: string;
}

type Row = {
  version: number;
  tenant: string;
  status: VersionStatus;
  options: Record<string, unknown>;
  title: string | null;
  error: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: string;
  unpriced_tokens: number;
  request_hash: string;
  created_at: Date;
};

const COLUMNS =
  'version, tenant, status, options, title, error, prompt_tokens, completion_tokens, cost_usd, unpriced_tokens, request_hash, created_at';

function rowOf(r: Row): ReportVersionRow {
  return {
    version: r.version,
    tenant: r.tenant,
    status: r.status,
    options: r.options,
    title: r.title,
    error: r.error,
    usage: usageOfSums({ prompt: r.prompt_tokens, completion: r.completion_tokens, cost: r.cost_usd, unpriced: r.unpriced_tokens }),
    requestHash: r.request_hash,
    createdAt: r.created_at.toISOString(),
  };
}

export function reportVersionsTable(pool: pg.Pool) {
  return {
    /**
     * The next version of the run's report, race-free: the run's own report row is locked while
     * the number is taken, so two requests at once get two numbers. With an idempotency key that
     * was used before, the version it allocated (created: false). Undefined: the run has no report.
     */
    async allocate(a: {
      researchId: string;
      tenant: string;
      options: Record<string, unknown>;
      requestHash: string;
      idempotencyKey?: string | undefined;
    }): Promise<{ row: ReportVersionRow; created: boolean } | undefined> {
      // The transaction ends with COMMIT also where it only read: nothing else was written.
      return inTransaction(pool, async (client) => {
        const locked = await client.query('SELECT 1 FROM reports WHERE research_id = $1 FOR UPDATE', [a.researchId]);
        if (!locked.rowCount) return undefined;
        if (a.idempotencyKey) {
          const { rows } = await client.query<Row>(
            `SELECT ${COLUMNS} FROM report_versions WHERE research_id = $1 AND idempotency_key = $2`,
            [a.researchId, a.idempotencyKey],
          );
          if (rows[0]) return { row: rowOf(rows[0]), created: false };
        }
        const { rows } = await client.query<Row>(
          `INSERT INTO report_versions (research_id, version, tenant, options, idempotency_key, request_hash)
           SELECT $1, coalesce(max(version), 1) + 1, $2, $3, $4, $5 FROM report_versions WHERE research_id = $1
           RETURNING ${COLUMNS}`,
          [a.researchId, a.tenant, JSON.stringify(a.options), a.idempotencyKey ?? null, a.requestHash],
        );
        return { row: rowOf(rows[0]!), created: true };
      });
    },
    /** The run's own report (version 1): its title and when it was written. */
    async original(researchId: string): Promise<{ title: string; createdAt: string } | undefined> {
      const { rows } = await pool.query<{ title: string; created_at: Date }>(
        'SELECT title, created_at FROM reports WHERE research_id = $1',
        [researchId],
      );
      return rows[0] ? { title: rows[0].title, createdAt: rows[0].created_at.toISOString() } : undefined;
    },
    async get(researchId: string, version: number): Promise<ReportVersionRow | undefined> {
      const { rows } = await pool.query<Row>(`SELECT ${COLUMNS} FROM report_versions WHERE research_id = $1 AND version = $2`, [
        researchId,
        version,
      ]);
      return rows[0] ? rowOf(rows[0]) : undefined;
    },
    /** The run's rewrites, oldest first. */
    async list(researchId: string): Promise<ReportVersionRow[]> {
      const { rows } = await pool.query<Row>(`SELECT ${COLUMNS} FROM report_versions WHERE research_id = $1 ORDER BY version`, [
        researchId,
      ]);
      return rows.map(rowOf);
    },
    /** The rewrite's end: ready or failed, with what it spent. A version that ended stays as it ended. */
    async finish(researchId: string, version: number, status: 'ready' | 'failed', usage: Usage, error?: string): Promise<void> {
      await pool.query(
        `UPDATE report_versions SET status = $3, prompt_tokens = $4, completion_tokens = $5, cost_usd = $6, error = $7,
                unpriced_tokens = $8, updated_at = now()
          WHERE research_id = $1 AND version = $2 AND status = 'writing'`,
        [researchId, version, status, usage.promptTokens, usage.completionTokens, usage.costUsd, error ?? null, usage.unpricedTokens ?? 0],
      );
    },
    /** What the requests of the calls whose keys start with `prefix` (one workflow run's) cost, as the request log has them. */
    async spentByCalls(researchId: string, prefix: string): Promise<Usage> {
      const { rows } = await pool.query(
        `SELECT coalesce(sum(prompt_tokens), 0)::bigint AS prompt, coalesce(sum(completion_tokens), 0)::bigint AS completion,
                coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(unpriced_tokens), 0)::bigint AS unpriced
           FROM llm_requests WHERE research_id = $1 AND starts_with(call_key, $2)`,
        [researchId, prefix],
      );
      return usageOfSums(rows[0]);
    },
  };
}
export type ReportVersionsTable = ReturnType<typeof reportVersionsTable>;
