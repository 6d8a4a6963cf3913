// POST /v1/research: checks a request before anything starts, then starts its run (a schedule's
// runs are started by Temporal with the same input, from runStart).
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import { BlockedError, checkUrl, WEB_PORTS } from '../../activities/crawl/ssrf';
import { countRunStarted } from '../../infra/metrics';
import type { Fairness } from '../../config';
import { priceOf } from '../../config/prices';
import { DEFAULT_MIN_OUTAGE, RESEARCH_ID_PREFIX } from '../../shared/constants';
import { ApiError } from '../../shared/errors';
import type { RunUser } from '../../shared/memory';
import { ResearchOptions, type Duration, type ResearchInput, type ResearchRequest, type RunStatus } from '../../shared/schemas';
import { memoryUserOf, type Caller } from '../auth';
import { durationToMs, summarize } from '../../shared/plain';
import { admissionId } from '../../workflows/messages';
import type { BudgetView } from '../../shared/messages';
import type { researchWorkflow } from '../../workflows/research';
import { ResearchPhaseKey, ResearchQuestionKey, ResearchStatusKey, ResearchTenantKey } from '../../workflows/search-attributes';
import type { ResearchContext } from './context';
import { searchWords } from './list';
import { readStatus } from './status';
import { checkProviders } from '../provider-check';
import { checkModels } from '../model-check';

export interface StartResult {
  id: string;
  status: RunStatus;
  /** False when an Idempotency-Key matched a run that already exists. */
  created: boolean;
}

/**
 * Who starts a run, as far as its memory goes: the caller (absent: a schedule's start, or a
 * caller inside the service), the schedule that starts it, and for a chat, what the user wrote of
 * a question that carries more (see RunUser.said).
 */
export interface RunStarter {
  caller?: Caller | undefined;
  scheduleId?: string | undefined;
  said?: string | undefined;
}

export async function start(
  ctx: ResearchContext,
  req: ResearchRequest,
  tenant: string,
  idempotencyKey?: string,
  by: RunStarter = {},
): Promise<StartResult> {
  const options = await checkRequest(ctx, req, tenant, by.caller);
  const id = idempotencyKey ? idForIdempotencyKey(tenant, idempotencyKey) : `${RESEARCH_ID_PREFIX}${randomUUID()}`;
  const run = runStart(ctx, req, tenant, options, by);
  try {
    await ctx.inFlight.admit(tenant, id, () =>
      ctx.deps.client.workflow.start<typeof researchWorkflow>('researchWorkflow', {
        ...run,
        workflowId: id,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !idempotencyKey) throw err;
    const existing = await ctx.deps.client.workflow.getHandle(id).describe();
    if (existing.memo?.requestHash !== run.memo.requestHash) {
      throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request');
    }
    return { id, status: (await readStatus(ctx, id, tenant)).status, created: false };
  }
  countRunStarted(tenant);
  if (req.sessionId) await ctx.deps.store.knowledge.addSessionRun(req.sessionId, id, req.question);
  return { id, status: 'running', created: true };
}

/**
 * Checks a request before anything starts (a run now, or a schedule's runs later): the user it
 * names (the caller's own, unless the caller is an admin key), its options, prices for a cost
 * budget, the tenant's session and collections, the webhook. Returns the options as the workflow
 * gets them.
 */
export async function checkRequest(ctx: ResearchContext, req: ResearchRequest, tenant: string, caller?: Caller): Promise<ResearchOptions> {
  if (caller) memoryUserOf(caller, req.userId);
  const options = withRunBudget(ctx, ResearchOptions.parse(req.options ?? {}));
  checkMaxOutage(ctx, options.maxOutage);
  if (options.maxCostUsd !== undefined) checkPrices(ctx, options.models);
  await checkKnowledge(ctx, req.sessionId, options.collections, tenant);
  if (options.webhook) checkWebhook(ctx, options.webhook.url);
  if (ctx.deps.searchProviders) checkProviders(options.searchProviders, ctx.deps.searchProviders, 'options.searchProviders');
  await checkModels(ctx.deps.modelCatalog, Object.values(options.models ?? {}), 'options.models');
  return options;
}

/**
 * The operator's token budget (RUN_MAX_TOKENS): a run whose request sets none gets it, so every
 * run has one; a request may ask for less, not more.
 */
function withRunBudget(ctx: ResearchContext, options: ResearchOptions): ResearchOptions {
  const cap = ctx.deps.runMaxTokens;
  if (!cap) return options;
  if (options.maxTokens === undefined) return { ...options, maxTokens: cap };
  if (options.maxTokens <= cap) return options;
  throw new ApiError(
    400,
    'budget_too_large',
    `options.maxTokens is ${options.maxTokens}; this server allows at most ${cap} tokens a run (RUN_MAX_TOKENS)`,
    { maxTokens: cap },
  );
}

/** options.maxOutage no shorter than RUN_MIN_OUTAGE: 400 with the minimum. */
function checkMaxOutage(ctx: ResearchContext, maxOutage: Duration): void {
  const least = ctx.deps.minOutage ?? DEFAULT_MIN_OUTAGE;
  if (durationToMs(maxOutage) >= durationToMs(least)) return;
  throw new ApiError(
    400,
    'max_outage_too_short',
    `options.maxOutage is ${maxOutage}; this server waits out an outage for at least ${least} (RUN_MIN_OUTAGE): a shorter one fails a run on the first slow answer`,
    { minOutage: least },
  );
}

/** A cost budget needs the price of every model the run may call. */
function checkPrices(ctx: ResearchContext, named: ResearchOptions['models']): void {
  const llm = ctx.deps.llm;
  if (!llm) return;
  const unpriced = [...new Set(Object.values({ ...llm.models, ...named }))].filter((m) => !priceOf(llm.prices, m));
  if (unpriced.length) {
    throw new ApiError(
      400,
      'cost_unknown',
      `options.maxCostUsd needs the price of every model the run uses, and ${unpriced.join(', ')} has none: set LLM_PRICES (model=input/output USD per million tokens)`,
      { unpriced },
    );
  }
}

/** A session and collections the request names must be the tenant's: 404 before anything starts. */
export async function checkKnowledge(
  ctx: ResearchContext,
  sessionId: string | undefined,
  collections: string[] | undefined,
  tenant: string,
): Promise<void> {
  const knowledge = ctx.deps.store.knowledge;
  if (sessionId && !(await knowledge.getSession(tenant, sessionId))) {
    throw new ApiError(404, 'session_not_found', `no session with id ${sessionId} (create one with POST /v1/sessions)`);
  }
  if (!collections?.length) return;
  const found = new Set((await knowledge.listCollections(tenant, collections)).map((c) => c.collectionId));
  const missing = collections.filter((c) => !found.has(c));
  if (missing.length) {
    throw new ApiError(404, 'collection_not_found', `options.collections names no collection of yours: ${missing.join(', ')}`, { missing });
  }
}

/** A webhook needs the server's secret to be signed, and a URL the SSRF guard lets through. */
function checkWebhook(ctx: ResearchContext, url: string): void {
  const webhook = ctx.deps.webhook;
  if (!webhook?.enabled) {
    throw new ApiError(
      400,
      'webhooks_disabled',
      'this server has no WEBHOOK_SECRET to sign deliveries with: options.webhook cannot be used',
    );
  }
  try {
    checkUrl({ allowHosts: webhook.allowHosts, allowedPorts: WEB_PORTS }, new URL(url));
  } catch (err) {
    if (err instanceof BlockedError) throw new ApiError(400, 'invalid_webhook', `options.webhook.url is not allowed: ${err.message}`);
    throw err;
  }
}

/**
 * Whose memory a run reads and teaches: the request's userId (checkRequest let only an admin key
 * name another user than its own), else the caller's own user; off when the request or the key
 * says so. A schedule's runs have memory only for a userId its request names, and not when the
 * key that made the schedule has memory off.
 */
export function runUser(req: ResearchRequest, options: ResearchOptions, by: RunStarter): RunUser | undefined {
  const id = req.userId ?? (by.scheduleId === undefined ? by.caller?.userId : undefined);
  if (id === undefined) return undefined;
  const said = by.said !== undefined && by.said !== req.question ? { said: by.said } : {};
  return { id, memory: options.memory !== false && by.caller?.memory !== false, ...said };
}

/** What a run is started with: its input, and the search attributes and memo the list reads. */
export function runStart(ctx: ResearchContext, req: ResearchRequest, tenant: string, options: ResearchOptions, by: RunStarter = {}) {
  const { taskQueue, retry, fairness } = ctx.deps;
  const { scheduleId } = by;
  const user = runUser(req, options, by);
  const input: ResearchInput = {
    question: req.question,
    tenant,
    options,
    ...(retry ? { retry } : {}),
    ...(req.sessionId ? { sessionId: req.sessionId } : {}),
    ...(scheduleId ? { scheduleId } : {}),
    ...(user ? { user } : {}),
    ...(fairness?.maxRuns ? { admission: { maxRuns: fairness.maxRuns, queueId: admissionId(taskQueue, tenant) } } : {}),
  };
  return {
    taskQueue,
    args: [input] as [ResearchInput],
    priority: runPriority(tenant, options, fairness),
    typedSearchAttributes: [
      { key: ResearchTenantKey, value: tenant },
      { key: ResearchStatusKey, value: 'running' },
      { key: ResearchPhaseKey, value: 'coordinating' },
      { key: ResearchQuestionKey, value: searchWords(summarize(req.question, 1_000)) },
    ],
    // The session travels in the memo so a run's session is found from its id (the chat endpoint's follow-ups).
    memo: {
      requestHash: requestHash(tenant, req),
      question: summarize(req.question, 300),
      // The status shows the budget the run got (its request's, or the operator's default).
      budget: runBudget(options),
      ...(req.sessionId ? { sessionId: req.sessionId } : {}),
      // Whose words the run learns: feedback, answers and guidance only from that user's key or an admin key (context.ts).
      ...(user?.memory ? { memoryUser: user.id } : {}),
    },
    staticSummary: `Research: ${summarize(req.question, 120)}`,
  };
}

/** The limits a run's budget has (tokens, cost, time), as the memo keeps them for its status. */
export function runBudget(options: ResearchOptions): BudgetView {
  const { maxTokens, maxCostUsd, deadline } = options;
  return {
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    ...(deadline !== undefined ? { deadline } : {}),
  };
}

/** The default priority key of Temporal's task queues (1 first, 5 last). */
const DEFAULT_PRIORITY = 3;

/**
 * A run's Temporal priority: its tenant's priority key (one lower for a `low` run) and the tenant
 * as fairness key, with the tenant's weight. Its steps and calls inherit it, so tasks waiting in a
 * queue are dispatched fairly across tenants, not in arrival order.
 */
export function runPriority(tenant: string, options: ResearchOptions, fairness: Fairness | undefined): Priority {
  const key = Math.min(5, (fairness?.priorities[tenant] ?? DEFAULT_PRIORITY) + (options.priority === 'low' ? 1 : 0));
  return { priorityKey: key, fairnessKey: tenant, fairnessWeight: fairness?.weights[tenant] ?? 1 };
}

export function idForIdempotencyKey(tenant: string, key: string): string {
  return `${RESEARCH_ID_PREFIX}${createHash('sha256').update(`${tenant}\u0000${key}`).digest('hex').slice(0, 32)}`;
}

function requestHash(tenant: string, req: ResearchRequest): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        tenant,
        req.question,
        req.options ?? {},
        ...(req.sessionId ? [req.sessionId] : []),
        ...(req.userId ? [req.userId] : []),
      ]),
    )
    .digest('hex');
}
