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
      `INSERT INTO research_runs (id, tenant, question, status, outcome, locale, answer, error, prompt_tokens, completion_tokens, cost_usd, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $12 THEN now() END)
       ON CONFLICT (id) DO UPDATE SET
         status = EXCLUDED.status, outcome = EXCLUDED.outcome, locale = EXCLUDED.locale, answer = EXCLUDED.answer,
         error = EXCLUDED.error, prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
         cost_usd = EXCLUDED.cost_usd, updated_at = now(),
         completed_at = COALESCE(research_runs.completed_at, EXCLUDED.completed_at)`,
      [
        run.id, run.tenant, run.question, run.status, run.outcome ?? null, run.locale ?? null, run.answer ?? null,
        run.error ?? null, run.usage.promptTokens, run.usage.completionTokens, run.usage.costUsd, terminal,
      ],
    );
  }
  return { recordRun };
}
