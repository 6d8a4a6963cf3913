// Rows that record what happened once, keyed by a stable id: the run itself, every finished LLM
// call (keyed by the activity that made it) and every finished sandbox run.
import type pg from 'pg';
import type { ResearchStatusView } from '../../shared/messages';
import type { RunStatus, Usage } from '../../shared/schemas';
import type { LlmRole } from '../../shared/constants';

/** A claim on an LLM call, with what the run says about it: the user's guidance, the models it named. */
export interface CallClaim {
  claimed: boolean;
  guidance: string[];
  models?: Partial<Record<LlmRole, string>>;
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
  /** The workflow's number for this write; runs started before it existed send none (0). */
  seq?: number | undefined;
  /** The run's status view as the `getStatus` query answers it at this write (runs started on
   *  code before the row kept it send one with their last write only). */
  view?: ResearchStatusView | undefined;
  /** The run's search settings (options.timeRange resolved against the run's start, and
   *  options.searchProviders); the search and crawl activities read them (bansTable.settings). */
  search?: { from?: string | undefined; to?: string | undefined; providers?: string[] | undefined } | undefined;
  /** The models the run named for its roles (options.models); its LLM calls read them with their claim. */
  models?: Partial<Record<LlmRole, string>> | undefined;
}

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

export interface RecordedRun {
  status: RunStatus;
  phase: string | null;
  plan: unknown;
  usage: Usage;
  error: string | null;
  outcome: string | null;
  /** The direct answer when outcome is answered_directly (otherwise the report's title). */
  answer: string | null;
  question: string;
  /** The workflow's number of the write this row holds. */
  writeSeq: number;
  /** The status view the run's last write left: null when that write sent none (a run that ended
   *  before views were kept; a write, not the last, of a run started before every write sent one). */
  view: unknown;
}

export function runsTable(pool: pg.Pool) {
  return {
    /** The run's row; `view: false` leaves its status view out (null), for a reader that needs
     *  only the columns (the row's writer, before each write). */
    async get(id: string, opts: { view?: boolean } = {}): Promise<RecordedRun | undefined> {
      const { rows } = await pool.query(
        `SELECT status, phase, plan, error, outcome, answer, question, write_seq, prompt_tokens, completion_tokens, cost_usd${opts.view === false ? '' : ', final_view'} FROM research_runs WHERE id = $1`,
        [id],
      );
      const r = rows[0];
      if (!r) return undefined;
      return {
        status: r.status,
        phase: r.phase,
        plan: r.plan,
        error: r.error,
        outcome: r.outcome,
        answer: r.answer,
        question: r.question,
        writeSeq: Number(r.write_seq ?? 0),
        view: r.final_view ?? null,
        usage: { promptTokens: r.prompt_tokens, completionTokens: r.completion_tokens, costUsd: Number(r.cost_usd) },
      };
    },
    /**
     * Upserts the run; later fields win when given, unless the row already holds a newer write
     * (higher seq) or a terminal status, which nothing overwrites. The first completion time stays.
     */
    /** True when the write was taken (not refused as older than the row, or after its end). */
    async record(run: RunRecord): Promise<boolean> {
      const terminal = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled';
      const { rowCount } = await pool.query(
        `INSERT INTO research_runs (id, tenant, question, status, outcome, locale, answer, error, prompt_tokens, completion_tokens, cost_usd,
                                    completed_at, phase, plan, plan_version, write_seq, final_view, search_from, search_to, search_providers,
                                    llm_models)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $12 THEN now() END, $13, $14, $15, $16, $17, $18, $19, $20, $21)
         ON CONFLICT (id) DO UPDATE SET
           status = EXCLUDED.status, outcome = COALESCE(EXCLUDED.outcome, research_runs.outcome),
           locale = COALESCE(EXCLUDED.locale, research_runs.locale), answer = COALESCE(EXCLUDED.answer, research_runs.answer),
           phase = COALESCE(EXCLUDED.phase, research_runs.phase), plan = COALESCE(EXCLUDED.plan, research_runs.plan),
           plan_version = COALESCE(EXCLUDED.plan_version, research_runs.plan_version),
           error = EXCLUDED.error, prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
           cost_usd = EXCLUDED.cost_usd, updated_at = now(), write_seq = EXCLUDED.write_seq,
           completed_at = COALESCE(research_runs.completed_at, EXCLUDED.completed_at), final_view = EXCLUDED.final_view,
           search_from = COALESCE(EXCLUDED.search_from, research_runs.search_from), search_to = COALESCE(EXCLUDED.search_to, research_runs.search_to),
           search_providers = COALESCE(EXCLUDED.search_providers, research_runs.search_providers),
           llm_models = COALESCE(EXCLUDED.llm_models, research_runs.llm_models)
         WHERE research_runs.status NOT IN ('completed', 'failed', 'cancelled') AND research_runs.write_seq <= EXCLUDED.write_seq`,
        [
          run.id,
          run.tenant,
          run.question,
          run.status,
          run.outcome ?? null,
          run.locale ?? null,
          run.answer ?? null,
          run.error ?? null,
          run.usage.promptTokens,
          run.usage.completionTokens,
          run.usage.costUsd,
          terminal,
          run.phase ?? null,
          run.plan === undefined ? null : JSON.stringify(run.plan),
          run.planVersion ?? null,
          run.seq ?? 0,
          run.view !== undefined ? JSON.stringify(run.view) : null,
          run.search?.from ?? null,
          run.search?.to ?? null,
          run.search?.providers ?? null,
          run.models ? JSON.stringify(run.models) : null,
        ],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}

/** One HTTP request to the model as the request log keeps it. */
export interface LoggedRequest {
  model: string;
  usage: Usage;
  answer?: unknown;
}

/** A usage from summed request columns (`prompt`, `completion`, `cost`, `unpriced`). */
export function usageOfSums(r: { prompt: unknown; completion: unknown; cost: unknown; unpriced: unknown }): Usage {
  const unpriced = Number(r.unpriced);
  return {
    promptTokens: Number(r.prompt),
    completionTokens: Number(r.completion),
    costUsd: Number(r.cost),
    ...(unpriced ? { unpricedTokens: unpriced } : {}),
  };
}

export function llmCallsTable(pool: pg.Pool) {
  return {
    async find(callKey: string): Promise<{ model: string; response: unknown; usage: Usage } | undefined> {
      const { rows } = await pool.query<{
        model: string;
        response: unknown;
        prompt_tokens: number;
        completion_tokens: number;
        cost_usd: string;
      }>('SELECT model, response, prompt_tokens, completion_tokens, cost_usd FROM llm_calls WHERE call_key = $1', [callKey]);
      const r = rows[0];
      if (!r) return undefined;
      return {
        model: r.model,
        response: r.response,
        usage: { promptTokens: r.prompt_tokens, completionTokens: r.completion_tokens, costUsd: Number(r.cost_usd) },
      };
    },
    /**
     * The first record of a call key wins: a late duplicate never replaces what was used. In the
     * same statement (one round trip instead of three): the request that got the answer (see
     * logRequest), and the release of the holder's claim on the call.
     */
    async record(c: LlmCallRecord, also: { request?: LoggedRequest; release?: string } = {}): Promise<void> {
      const { sql, values } = recordStatement(c, also);
      await pool.query(sql, values);
    },
    /** What the run's HTTP requests to the model cost, as the append-only request log has them. */
    async spent(researchId: string): Promise<Usage> {
      const { rows } = await pool.query(
        `SELECT coalesce(sum(prompt_tokens), 0)::bigint AS prompt, coalesce(sum(completion_tokens), 0)::bigint AS completion,
                coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(unpriced_tokens), 0)::bigint AS unpriced
           FROM llm_requests WHERE research_id = $1`,
        [researchId],
      );
      return usageOfSums(rows[0]);
    },
    /** One HTTP request, the usage it reported and its answer (append-only). */
    async logRequest(r: { researchId: string; callKey: string } & LoggedRequest): Promise<void> {
      await pool.query(
        `INSERT INTO llm_requests (research_id, call_key, model, prompt_tokens, completion_tokens, cost_usd, unpriced_tokens, answer)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          r.researchId,
          r.callKey,
          r.model,
          r.usage.promptTokens,
          r.usage.completionTokens,
          r.usage.costUsd,
          r.usage.unpricedTokens ?? 0,
          r.answer === undefined ? null : JSON.stringify(r.answer),
        ],
      );
    },
    /** The answers a call's requests got, in order (an attempt that did not live to record them). */
    async answers(callKey: string): Promise<{ model: string; usage: Usage; answer: unknown }[]> {
      const { rows } = await pool.query<{
        model: string;
        prompt_tokens: number;
        completion_tokens: number;
        cost_usd: string;
        unpriced_tokens: number;
        answer: unknown;
      }>(
        `SELECT model, prompt_tokens, completion_tokens, cost_usd, unpriced_tokens, answer FROM llm_requests
          WHERE call_key = $1 AND answer IS NOT NULL ORDER BY id`,
        [callKey],
      );
      return rows.map((r) => ({
        model: r.model,
        usage: {
          promptTokens: r.prompt_tokens,
          completionTokens: r.completion_tokens,
          costUsd: Number(r.cost_usd),
          ...(r.unpriced_tokens ? { unpricedTokens: r.unpriced_tokens } : {}),
        },
        answer: r.answer,
      }));
    },
  };
}
export type LlmCallsTable = ReturnType<typeof llmCallsTable>;

/** The statement that records a call, with the request that got its answer and the release of its claim. */
function recordStatement(c: LlmCallRecord, also: { request?: LoggedRequest; release?: string }): { sql: string; values: unknown[] } {
  const values: unknown[] = [
    c.callKey,
    c.researchId,
    c.role,
    c.model,
    c.promptName,
    JSON.stringify(c.response),
    c.usage.promptTokens,
    c.usage.completionTokens,
    c.usage.costUsd,
    c.durationMs,
  ];
  const ctes: string[] = [];
  if (also.request) {
    const r = also.request;
    const at = values.length;
    values.push(
      r.model,
      r.usage.promptTokens,
      r.usage.completionTokens,
      r.usage.costUsd,
      r.usage.unpricedTokens ?? 0,
      r.answer === undefined ? null : JSON.stringify(r.answer),
    );
    ctes.push(
      `request AS (INSERT INTO llm_requests (research_id, call_key, model, prompt_tokens, completion_tokens, cost_usd, unpriced_tokens, answer)
       VALUES ($2, $1, $${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}))`,
    );
  }
  if (also.release !== undefined) {
    values.push(also.release);
    ctes.push(`released AS (DELETE FROM llm_call_leases WHERE call_key = $1 AND holder = $${values.length})`);
  }
  const sql = `${ctes.length ? `WITH ${ctes.join(', ')} ` : ''}INSERT INTO llm_calls (call_key, research_id, role, model, prompt_name, response, prompt_tokens, completion_tokens, cost_usd, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (call_key) DO NOTHING`;
  return { sql, values };
}

/** Claims on LLM calls in flight: one attempt of an activity pays, another waits for its answer. */
export function llmLeasesTable(pool: pg.Pool) {
  return {
    /**
     * Takes the claim, or renews it for its holder; `claimed` is false while another holder's claim
     * is live. With a research id, the same round trip reads the guidance the user gave that run
     * (steering), which the call about to be paid for must follow, and the models the run named.
     */
    async claim(callKey: string, holder: string, ttlMs: number, researchId?: string): Promise<CallClaim> {
      const { rows } = await pool.query<{ claimed: number; guidance: string[] | null; models: Partial<Record<LlmRole, string>> | null }>(
        `WITH claim AS (
           INSERT INTO llm_call_leases (call_key, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
           ON CONFLICT (call_key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
           WHERE llm_call_leases.expires_at < now() OR llm_call_leases.holder = EXCLUDED.holder
           RETURNING holder)
         SELECT (SELECT count(*) FROM claim)::int AS claimed,
                ARRAY(SELECT text FROM run_guidance WHERE research_id = $4 ORDER BY seq) AS guidance,
                (SELECT llm_models FROM research_runs WHERE id = $4) AS models`,
        [callKey, holder, ttlMs, researchId ?? null],
      );
      const r = rows[0]!;
      return { claimed: r.claimed === 1, guidance: r.guidance ?? [], ...(r.models ? { models: r.models } : {}) };
    },
    async release(callKey: string, holder: string): Promise<void> {
      await pool.query('DELETE FROM llm_call_leases WHERE call_key = $1 AND holder = $2', [callKey, holder]);
    },
  };
}
export type LlmLeasesTable = ReturnType<typeof llmLeasesTable>;

export function sandboxRunsTable(pool: pg.Pool) {
  return {
    async find<T>(callKey: string): Promise<T | undefined> {
      const { rows } = await pool.query<{ result: T }>('SELECT result FROM sandbox_runs WHERE call_key = $1', [callKey]);
      return rows[0]?.result;
    },
    /** A step's finished runs whose run number is in [from, to), in the order of their numbers. */
    async ofStep<T>(
      researchId: string,
      stepId: string,
      from: number,
      to: number,
    ): Promise<{ attempt: number; status: string; result: T }[]> {
      const { rows } = await pool.query<{ attempt: number; status: string; result: T }>(
        `SELECT attempt, status, result FROM sandbox_runs
         WHERE research_id = $1 AND step_id = $2 AND attempt >= $3 AND attempt < $4 ORDER BY attempt, created_at`,
        [researchId, stepId, from, to],
      );
      return rows;
    },
    async record(r: {
      callKey: string;
      researchId: string;
      stepId: string;
      attempt: number;
      status: string;
      result: unknown;
    }): Promise<void> {
      await pool.query(
        'INSERT INTO sandbox_runs (call_key, research_id, step_id, attempt, status, result) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (call_key) DO NOTHING',
        [r.callKey, r.researchId, r.stepId, r.attempt, r.status, JSON.stringify(r.result)],
      );
    },
  };
}

/** The guidance a user gave a running research: one row per steering message (an LLM call reads
 *  it with its claim, in llmLeasesTable). */
export function guidanceTable(pool: pg.Pool) {
  return {
    async add(researchId: string, seq: number, text: string): Promise<void> {
      await pool.query('INSERT INTO run_guidance (research_id, seq, text) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        researchId,
        seq,
        text,
      ]);
    },
  };
}

/** What the search and crawl activities need to know of a run, read in one query. */
export interface RunSearchSettings {
  /** Domains the user banned from the run (hard: never used). */
  banned: string[];
  /** The period sources must be from (inclusive dates), when the run has one. */
  timeRange?: { from?: string; to?: string };
  /** The run's own provider choice (options.searchProviders). */
  runProviders?: string[];
  /** The tenant's stored choice (PUT /v1/search-preferences). */
  tenantProviders?: string[];
  preferDomains: string[];
  avoidDomains: string[];
}

/** Domains the user banned from a running research, and the rest of the run's search settings. */
export function bansTable(pool: pg.Pool) {
  return {
    async add(researchId: string, domains: string[]): Promise<void> {
      await pool.query('INSERT INTO run_banned_domains (research_id, domain) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [
        researchId,
        domains,
      ]);
    },
    async of(researchId: string): Promise<string[]> {
      const { rows } = await pool.query('SELECT domain FROM run_banned_domains WHERE research_id = $1 ORDER BY domain', [researchId]);
      return rows.map((r) => String(r.domain));
    },
    /**
     * The run's bans, time range and provider choice, with its tenant's preferences: one round
     * trip. A run without a row (a step workflow started on its own) has bans only.
     */
    async settings(researchId: string): Promise<RunSearchSettings> {
      const { rows } = await pool.query<{
        banned: string[];
        search_from: string | null;
        search_to: string | null;
        search_providers: string[] | null;
        tenant_providers: string[] | null;
        prefer_domains: string[] | null;
        avoid_domains: string[] | null;
      }>(
        `SELECT ARRAY(SELECT domain FROM run_banned_domains WHERE research_id = $1 ORDER BY domain) AS banned,
                r.search_from::text AS search_from, r.search_to::text AS search_to, r.search_providers,
                p.providers AS tenant_providers, p.prefer_domains, p.avoid_domains
           FROM (SELECT $1::text AS id) q
           LEFT JOIN research_runs r ON r.id = q.id
           LEFT JOIN search_preferences p ON p.tenant = r.tenant`,
        [researchId],
      );
      const r = rows[0]!;
      const timeRange =
        r.search_from || r.search_to
          ? { ...(r.search_from ? { from: r.search_from } : {}), ...(r.search_to ? { to: r.search_to } : {}) }
          : undefined;
      return {
        banned: r.banned,
        ...(timeRange ? { timeRange } : {}),
        ...(r.search_providers ? { runProviders: r.search_providers } : {}),
        ...(r.tenant_providers ? { tenantProviders: r.tenant_providers } : {}),
        preferDomains: r.prefer_domains ?? [],
        avoidDomains: r.avoid_domains ?? [],
      };
    },
  };
}
