// GET /v1/research: the tenant's runs from Temporal's visibility, from the search attributes and
// memo each run was started with (runStart) and keeps up to date.
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { ApiError, failureMessage } from '../../shared/errors';
import { Phase, RunStatus } from '../../shared/schemas';
import type { ListedRun, RunList } from '../contract';
import { endedStatus, iso, type ResearchContext } from './context';

export interface RunListFilter {
  status?: RunStatus | undefined;
  phase?: Phase | undefined;
  since?: Date | undefined;
  q?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * The tenant's runs, running ones first (newest first), then ended ones (most recently ended
 * first); filtered by status, phase, start time and words of the question; `cursor` is the page
 * token of the previous answer.
 */
export async function list(ctx: ResearchContext, tenant: string, f: RunListFilter): Promise<RunList> {
  const { client } = ctx.deps;
  const res = await client.workflowService
    .listWorkflowExecutions({
      namespace: client.options.namespace,
      // SQL visibility keeps its own order (ORDER BY is for Elasticsearch only): open runs newest
      // first, then closed runs by close time, most recent first.
      query: listQuery(tenant, f),
      pageSize: f.limit,
      ...(f.cursor ? { nextPageToken: pageToken(f.cursor) } : {}),
    })
    .catch((err: unknown) => {
      if (f.cursor && /token|cursor/i.test(failureMessage(err))) throw invalidCursor();
      throw err;
    });
  const runs = await Promise.all((res.executions ?? []).map((e) => listedRun(e)));
  const token = res.nextPageToken?.length ? Buffer.from(res.nextPageToken).toString('base64url') : undefined;
  return { runs, ...(token ? { nextCursor: token } : {}) };
}

function listQuery(tenant: string, f: RunListFilter): string {
  const clauses = [`WorkflowType = 'researchWorkflow'`, `ResearchTenant = '${tenant}'`];
  if (f.status) clauses.push(`ResearchStatus = '${f.status}'`);
  if (f.phase) clauses.push(`ResearchPhase = '${f.phase}'`);
  if (f.since) clauses.push(`StartTime >= '${f.since.toISOString()}'`);
  const words = searchWords(f.q ?? '');
  if (words) clauses.push(`ResearchQuestion = '${words}'`);
  return clauses.join(' AND ');
}

/**
 * The page token a cursor carries. Visibility's tokens (SQL stores and Elasticsearch alike) are
 * JSON objects: anything else is refused here at once. Handed to Temporal, a garbage token was an
 * internal error that the client retried for 20 s before the API answered 500.
 */
function pageToken(cursor: string): Uint8Array {
  const token = Buffer.from(cursor, 'base64url');
  if (!token.length || token.toString('base64url') !== cursor.replace(/=+$/, '')) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(token.toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidCursor();
  return token;
}

const invalidCursor = () => new ApiError(400, 'invalid_cursor', 'cursor is not one this API gave out');

/** One visibility record as the list shows it. */
async function listedRun(e: temporal.api.workflow.v1.IWorkflowExecutionInfo): Promise<ListedRun> {
  const attrs = decodeSearchAttributes(e.searchAttributes?.indexedFields);
  const memo = e.memo?.fields?.question ? await defaultPayloadConverter.fromPayload(e.memo.fields.question) : undefined;
  const recorded = RunStatus.safeParse(attrs.ResearchStatus);
  const phase = Phase.safeParse(attrs.ResearchPhase);
  const ended = endedStatus(e.status);
  return {
    id: e.execution?.workflowId ?? '',
    // A run that ended without writing its last status (terminated) is what Temporal says.
    status:
      ended && (!recorded.success || recorded.data === 'running' || recorded.data === 'awaiting_review')
        ? ended
        : recorded.success
          ? recorded.data
          : 'running',
    phase: phase.success ? phase.data : undefined,
    question: typeof memo === 'string' ? memo : String(attrs.ResearchQuestion ?? ''),
    startedAt: iso(e.startTime),
    closedAt: iso(e.closeTime),
    steps: typeof attrs.ResearchStepCount === 'number' ? attrs.ResearchStepCount : undefined,
  };
}

/** Search attribute payloads to plain values (a keyword list's first value). */
function decodeSearchAttributes(fields: Record<string, temporal.api.common.v1.IPayload> | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(fields ?? {})) {
    const v = defaultPayloadConverter.fromPayload(p);
    out[k] = Array.isArray(v) ? v[0] : v;
  }
  return out;
}

/**
 * The question's words as the ResearchQuestion attribute holds them, and a search for them: lower
 * case, punctuation gone. Visibility on PostgreSQL indexes a Text attribute as it is given (case
 * and punctuation kept, words split at spaces), where SQLite's and Elasticsearch's analysers fold
 * them; normalised on both sides, "battery" finds "Battery storage prices?" on every store.
 */
export function searchWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
