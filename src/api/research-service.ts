// Temporal-facing operations behind the HTTP API (and the CLI): start a run, read its state.
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { RESEARCH_ID_PREFIX } from '../shared/constants';
import { ApiError } from '../shared/errors';
import {
  ResearchOptions,
  summarize,
  type Phase,
  type ResearchRequest,
  type ResearchResult,
  type RunStatus,
  type Usage,
} from '../shared/schemas';
import { getStatusQuery } from '../workflows/messages';
import { ResearchPhaseKey, ResearchStatusKey, ResearchTenantKey } from '../workflows/search-attributes';
import type { researchWorkflow } from '../workflows/research';

export interface ResearchServiceDeps {
  client: Client;
  taskQueue: string;
}

export interface StartResult {
  id: string;
  status: RunStatus;
  /** False when an Idempotency-Key matched a run that already exists. */
  created: boolean;
}

export interface ResearchView {
  id: string;
  status: RunStatus;
  phase: Phase;
  question: string;
  usage?: Usage;
  error?: string;
}

const TERMINAL_STATUS: Record<string, RunStatus | undefined> = {
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  TERMINATED: 'cancelled',
  CANCELLED: 'cancelled',
};

function requestHash(tenant: string, req: ResearchRequest): string {
  return createHash('sha256').update(JSON.stringify([tenant, req.question, req.options ?? {}])).digest('hex');
}

export function idForIdempotencyKey(tenant: string, key: string): string {
  return `${RESEARCH_ID_PREFIX}${createHash('sha256').update(`${tenant}\u0000${key}`).digest('hex').slice(0, 32)}`;
}

export function createResearchService(deps: ResearchServiceDeps) {
  async function start(req: ResearchRequest, tenant: string, idempotencyKey?: string): Promise<StartResult> {
    const options = ResearchOptions.parse(req.options ?? {});
    const id = idempotencyKey ? idForIdempotencyKey(tenant, idempotencyKey) : `${RESEARCH_ID_PREFIX}${randomUUID()}`;
    const hash = requestHash(tenant, req);
    try {
      await deps.client.workflow.start<typeof researchWorkflow>('researchWorkflow', {
        taskQueue: deps.taskQueue,
        workflowId: id,
        args: [{ question: req.question, tenant, options }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: ResearchTenantKey, value: tenant },
          { key: ResearchStatusKey, value: 'running' },
          { key: ResearchPhaseKey, value: 'coordinating' },
        ],
        memo: { requestHash: hash, question: summarize(req.question, 300) },
        staticSummary: `Research: ${summarize(req.question, 120)}`,
      });
      return { id, status: 'running', created: true };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !idempotencyKey) throw err;
      const existing = await deps.client.workflow.getHandle(id).describe();
      if (existing.memo?.requestHash !== hash) {
        throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request');
      }
      const view = await get(id);
      return { id, status: view.status, created: false };
    }
  }

  async function get(id: string): Promise<ResearchView> {
    const handle = deps.client.workflow.getHandle(id);
    let desc;
    try {
      desc = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new ApiError(404, 'not_found', `no research run with id ${id}`);
      throw err;
    }
    if (desc.type !== 'researchWorkflow') throw new ApiError(404, 'not_found', `no research run with id ${id}`);
    const question = String(desc.memo?.question ?? '');
    const closed = TERMINAL_STATUS[desc.status.name];
    if (!closed) {
      const s = await handle.query(getStatusQuery);
      return { id, status: s.status, phase: s.phase, question: s.question, usage: s.usage, ...(s.error ? { error: s.error } : {}) };
    }
    if (closed === 'completed') {
      const r = (await handle.result()) as ResearchResult;
      return { id, status: r.status, phase: 'done', question, usage: r.usage };
    }
    let error: string | undefined;
    if (closed === 'failed') {
      error = await handle.result().then(
        () => undefined,
        (e: unknown) => summarize(rootMessage(e)),
      );
    }
    return { id, status: closed, phase: 'done', question, ...(error ? { error } : {}) };
  }

  return { start, get };
}

function rootMessage(e: unknown): string {
  let cur = e as { message?: string; cause?: unknown } | undefined;
  while (cur && cur.cause) cur = cur.cause as typeof cur;
  return cur?.message ?? String(e);
}

export type ResearchService = ReturnType<typeof createResearchService>;
