// The one path every model call takes, structured answer or tool calls alike: reuse what an
// earlier attempt of the same activity already paid for, one HTTP call per round (request.ts),
// usage summed, content filter and refusal checked, at most two repair requests, then one row in
// the call log. A registered prompt's request is built by structured.ts.
import type OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { llmConfigured } from '../../config';
import type { LlmRole } from '../../shared/constants';
import { ErrorType, LLM_NOT_CONFIGURED_MESSAGE } from '../../shared/errors';
import type { Usage } from '../../shared/schemas';
import { metrics } from '../../infra/metrics';
import { activityCallKey, keep } from '../attempt';
import type { Message } from '../store';
import type { CallClaim, LlmCallsTable, LlmLeasesTable, LoggedRequest } from '../store/runs';
import { pricedUsage } from './client';
import { createLimiters, type Limiter } from './limiter';
import { CLIPPED, GUIDANCE } from './model-call';
import type { PromptVars, StructuredPrompt } from './prompt-def';
import { Providers } from './providers';
import { renderPart } from './render';
import { ask, createEndpoints, windowOf, type Endpoints, type StructuredMode } from './request';
import { followUpRequest, structuredRequest, type StructuredContext } from './structured';
import type { ModelRequest, ReplyReading } from './model-request';
import { toolCallsInText, toolNames } from './text-tools';

export { refusesResponseFormat, structuredParams, type StructuredMode } from './request';
export { parseJsonAnswer } from './structured';
export type { ModelRequest, ReplyReading, TextSink } from './model-request';

type Choice = OpenAI.Chat.ChatCompletion.Choice;

export interface ModelResult<T> {
  output: T;
  model: string;
  usage: Usage;
  /** True when the answer came from the call log (an earlier attempt finished but did not report). */
  reused: boolean;
}

export interface LlmDeps {
  config: Pick<Config, 'llm'>;
  calls: LlmCallsTable;
  leases: LlmLeasesTable;
  client: () => OpenAI;
  /** Primary and fallback provider with their health; by default from the config, around `client`. */
  providers?: Providers;
  /** Each provider's adaptive in-flight limit; by default one per endpoint, up to LLM_PROVIDER_CONCURRENCY. */
  limiterOf?: (endpoint: string) => Limiter;
}

/** The run's guidance at the end of the system message: every model call after it was given sees it. */
export function withGuidance(messages: Message[], guidance: string[]): Message[] {
  if (!guidance.length) return messages;
  const note = renderPart(GUIDANCE, { guidance: guidance.map((g) => `- ${g}`).join('\n') });
  const [first, ...rest] = messages;
  return first?.role === 'system'
    ? [{ ...first, content: `${String(first.content)}\n\n${note}` }, ...rest]
    : [{ role: 'system', content: note }, ...messages];
}

/**
 * Reasoning that some models write before the answer (DeepSeek-R1 and other local reasoning
 * models: `<think>…</think>`, sometimes with the opening tag left out) never reaches a parser or a
 * report.
 */
export function stripReasoning(text: string): string {
  let out = text.replace(/<(think|thinking|reasoning|reflection)>[\s\S]*?<\/\1>/gi, '');
  const close = /<\/(think|thinking|reasoning)>/i.exec(out);
  if (close) out = out.slice(close.index + close[0].length);
  return out.replace(/^\s*<(think|thinking|reasoning)>[\s\S]*$/i, '').trim();
}

/** Requests per call: the answer and at most two repairs, each quoting what was wrong. */
const MAX_ROUNDS = 3;
/** A repair quotes at most this much of the answer it repairs: not the whole cut-off text again. */
const REPAIR_QUOTE_CHARS = 600;

/** The mark a shortened quote ends with. */
const clipped = () => renderPart(CLIPPED, {});

/**
 * A repair's messages as sent: the answer they quote shortened, and left out altogether when it
 * was cut off (a model shown the start of its cut-off answer copies it, and runs on again).
 */
function repairMessages(repair: Message[], cutOff: boolean): Message[] {
  return repair.flatMap((m): Message[] => {
    if (m.role !== 'assistant' || typeof m.content !== 'string') return [m];
    if (cutOff) return [];
    return [m.content.length <= REPAIR_QUOTE_CHARS ? m : { ...m, content: `${m.content.slice(0, REPAIR_QUOTE_CHARS)} ${clipped()}` }];
  });
}

/**
 * A claim on a call lives twice the attempt's heartbeat timeout (30 s at the default 15 s; never
 * more than that, never under 4 s) unless its holder renews it, every third of that: a dead
 * holder's call is taken over about as soon as Temporal gives it to another attempt.
 */
function leaseTtlMs(): number {
  const heartbeat = Context.current().info.heartbeatTimeoutMs;
  return heartbeat ? Math.min(30_000, Math.max(4_000, 2 * heartbeat)) : 30_000;
}
/** How often an attempt that found the call claimed looks for the holder's answer. */
const WAIT_POLL_MS = 500;

/** An answer as the caller reads it, after the provider's own refusals are turned into failures. */
function readChoice<T>(req: ModelRequest<T>, choice: Choice | undefined, model: string): ReplyReading<T> {
  if (choice?.finish_reason === 'content_filter')
    throw ApplicationFailure.nonRetryable(`model ${model} refused: content filter`, ErrorType.LlmContentFilter);
  if (choice?.message?.refusal)
    throw ApplicationFailure.nonRetryable(`model ${model} refused: ${choice.message.refusal}`, ErrorType.LlmContentFilter);
  return req.read(choice);
}

/** What one createLlm keeps for its calls: its dependencies and what the endpoints taught it. */
interface LlmState {
  deps: LlmDeps;
  endpoints: Endpoints;
}

export function createLlm(deps: LlmDeps) {
  // One per createLlm, which the worker makes once: provider health and limits are per worker process.
  const providers = deps.providers ?? new Providers(deps.config, deps.client);
  const limiterOf = deps.limiterOf ?? createLimiters(deps.config.llm.providerConcurrency);
  const state: LlmState = { deps, endpoints: createEndpoints(deps.config, providers, limiterOf) };

  function complete<T>(req: ModelRequest<T>): Promise<ModelResult<T>> {
    return completeCall(state, req);
  }

  /** A registered prompt answered as JSON that its schema accepts. */
  function structured<P extends StructuredPrompt>(def: P, vars: PromptVars<P>, ctx: StructuredContext) {
    return complete(structuredRequest(def, vars, ctx));
  }

  /** A registered prompt's JSON answer asked at the end of a conversation the model had with tools
   *  (followUpRequest): the conversation's cached prefix is reused. */
  function followUp<P extends StructuredPrompt>(
    def: P,
    conversation: Parameters<typeof followUpRequest>[1],
    ask: string,
    ctx: StructuredContext,
  ) {
    return complete(followUpRequest(def, conversation, ask, ctx));
  }

  /** The context window of the role's model, in tokens, when it is known (set or learned). */
  async function contextWindow(role: LlmRole): Promise<number | undefined> {
    if (!llmConfigured(deps.config)) return undefined;
    const model = deps.config.llm.models[role];
    return windowOf(state.endpoints, providers.primary, `${deps.config.llm.baseUrl ?? 'openai'}|${model}`, model);
  }

  /** The output limit of the role's requests (its max_tokens before a cut-off answer's boost). */
  function outputLimit(role: LlmRole): number {
    return deps.config.llm.maxTokens[role];
  }

  return { complete, structured, followUp, contextWindow, outputLimit };
}
export type Llm = ReturnType<typeof createLlm>;

async function completeCall<T>(state: LlmState, req: ModelRequest<T>): Promise<ModelResult<T>> {
  const { deps } = state;
  if (!llmConfigured(deps.config)) throw ApplicationFailure.nonRetryable(LLM_NOT_CONFIGURED_MESSAGE, ErrorType.LlmNotConfigured);
  const callKey = activityCallKey(req.key);
  const reusable = async (): Promise<ModelResult<T> | undefined> => {
    const earlier = await deps.calls.find(callKey);
    const value = earlier ? req.reuse(earlier.response) : undefined;
    if (!earlier || value === undefined) return undefined;
    return { output: value, model: earlier.model, usage: pricedUsage(deps.config.llm.prices, earlier.model, earlier.usage), reused: true };
  };
  // Only a retry can find an earlier attempt's answer: the first attempt skips the lookups.
  const retry = Context.current().info.attempt > 1;
  const earlier = retry ? await reusable() : undefined;
  if (earlier) return earlier;
  // Two attempts of one activity can be alive at once (a heartbeat timeout during a network cut):
  // the one that claims the call pays for it, the other waits for its answer.
  // The claim's round trip also brings the guidance the user gave the run (steering).
  const holder = `${Context.current().info.attempt}/${randomUUID()}`;
  const ttl = leaseTtlMs();
  let claim: CallClaim;
  while (!(claim = await deps.leases.claim(callKey, holder, ttl, req.researchId)).claimed) {
    Context.current().heartbeat({ waitingFor: 'another attempt of this call' });
    await Context.current().sleep(WAIT_POLL_MS);
    const answered = await reusable();
    if (answered) return answered;
  }
  // A rewrite's own model, else the one the run named for the role, else the server's.
  const model = req.model ?? claim.models?.[req.role] ?? deps.config.llm.models[req.role];
  const renew = setInterval(() => void deps.leases.claim(callKey, holder, ttl).catch(() => undefined), ttl / 3);
  // Recording the answer releases the claim in the same statement; otherwise the end does.
  const lease = { holder, released: false };
  try {
    // The previous holder may have answered between our look and our claim.
    return (
      (retry ? await reusable() : undefined) ??
      (await sendRounds(
        {
          state,
          req: { ...req, model },
          callKey,
          lease,
          model,
          priced: model,
          started: Date.now(),
          tokens: { promptTokens: 0, completionTokens: 0 },
        },
        retry,
        claim.guidance,
      ))
    );
  } finally {
    clearInterval(renew);
    if (!lease.released) await deps.leases.release(callKey, holder).catch(() => undefined);
  }
}

/** A claimed call while its rounds are made: what it has spent, and the claim it releases. */
interface Call<T> {
  state: LlmState;
  req: ModelRequest<T>;
  callKey: string;
  lease: { holder: string; released: boolean };
  /** The role's configured model, which readChoice names in its refusals. */
  model: string;
  /** The configured model of the provider that answered last (the fallback's, when it did): prices are by it. */
  priced: string;
  started: number;
  tokens: { promptTokens: number; completionTokens: number };
}

/**
 * The HTTP rounds of a claimed call: one answer, at most two repairs, every request's usage and
 * answer logged in one insert. Answers an earlier attempt logged but did not live to record (a
 * worker killed in between) are read again first, in order, so they are not paid for twice.
 */
async function sendRounds<T>(call: Call<T>, retry: boolean, guidance: string[]): Promise<ModelResult<T>> {
  const { req } = call;
  const messages = withGuidance([...req.messages], guidance);
  const replayed = retry ? await replayLogged(call, messages) : { round: 0, problem: '' };
  if ('result' in replayed) return replayed.result;
  let { problem } = replayed;
  let boost = 1;
  for (let round = replayed.round; round < MAX_ROUNDS; round++) {
    const { choice, request } = await askRound(call, messages, boost, round);
    // A paid answer is kept even while PostgreSQL is away (see keep()), with its usage: with the
    // call's record when it is the answer, in the request log alone when it is refused or needs
    // a repair.
    const logAlone = () => keep(() => call.state.deps.calls.logRequest({ researchId: req.researchId, callKey: call.callKey, ...request }));
    let reading: ReplyReading<T>;
    try {
      reading = readChoice(req, choice, call.model);
    } catch (err) {
      await logAlone();
      throw err;
    }
    if ('problem' in reading) {
      await logAlone();
      problem = reading.problem;
      messages.push(...repairMessages(reading.repair, choice?.finish_reason === 'length'));
      // A cut-off answer gets room to finish.
      boost = choice?.finish_reason === 'length' ? 2 : boost;
      continue;
    }
    return finish(call, reading.value, reading.logged, request.model, false, request);
  }
  throw ApplicationFailure.nonRetryable(
    `model ${call.priced} gave no usable ${req.expected} after ${MAX_ROUNDS - 1} repair requests: ${problem}`,
    ErrorType.LlmInvalidOutput,
  );
}

/** The answers an earlier attempt logged, read again in order: the call's answer, or the repairs they need. */
async function replayLogged<T>(
  call: Call<T>,
  messages: Message[],
): Promise<{ result: ModelResult<T> } | { round: number; problem: string }> {
  let round = 0;
  let problem = '';
  for (const earlier of await call.state.deps.calls.answers(call.callKey)) {
    if (round >= MAX_ROUNDS - 1) break;
    round++;
    call.tokens.promptTokens += earlier.usage.promptTokens;
    call.tokens.completionTokens += earlier.usage.completionTokens;
    const reading = readChoice(call.req, earlier.answer as Choice | undefined, call.model);
    if ('problem' in reading) {
      problem = reading.problem;
      messages.push(...repairMessages(reading.repair, (earlier.answer as Choice | undefined)?.finish_reason === 'length'));
      continue;
    }
    return { result: await finish(call, reading.value, reading.logged, earlier.model, true) };
  }
  return { round, problem };
}

/** One request of the call, counted (usage, cost, metrics), its answer in the shape callers read. */
async function askRound<T>(
  call: Call<T>,
  messages: Message[],
  boost: number,
  round: number,
): Promise<{ choice: Choice | undefined; request: LoggedRequest }> {
  const { req } = call;
  const prices = call.state.deps.config.llm.prices;
  const sentAt = Date.now();
  const asked = await ask(call.state.endpoints, req as ModelRequest<unknown>, messages, boost);
  const { completion, mode } = asked;
  call.priced = asked.model;
  const labels = { model: call.priced, role: req.role };
  metrics.llmSeconds.observe(labels, (Date.now() - sentAt) / 1000);
  const spent = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
  call.tokens.promptTokens += spent.promptTokens;
  call.tokens.completionTokens += spent.completionTokens;
  const usage = pricedUsage(prices, call.priced, spent);
  metrics.llmRequests.inc({ ...labels, outcome: round === 0 ? 'ok' : 'repair' });
  metrics.llmTokens.inc({ ...labels, kind: 'prompt' }, spent.promptTokens);
  metrics.llmTokens.inc({ ...labels, kind: 'completion' }, spent.completionTokens);
  metrics.llmCost.inc(labels, usage.costUsd);
  const choice = completion.choices?.[0];
  if (choice?.message) normalizeChoice(req, choice, mode);
  return { choice, request: { model: completion.model || call.priced, usage, answer: choice ?? null } };
}

/** An answer as callers read it: a forced function call's JSON as content, no reasoning, no clipped
 *  mark, and a tool call written as text turned into a tool call. */
function normalizeChoice(req: ModelRequest<unknown>, choice: Choice, mode: StructuredMode): void {
  // A forced function call carries the JSON in its arguments.
  if (req.responseFormat && mode === 'tool' && !choice.message.content) {
    const call = choice.message.tool_calls?.find((t) => t.type === 'function');
    choice.message.content = call?.type === 'function' ? call.function.arguments : null;
    choice.message.tool_calls = [];
  }
  // The marker of a clipped quote never comes back as text of the answer.
  if (typeof choice.message.content === 'string') choice.message.content = stripReasoning(choice.message.content).replaceAll(clipped(), '');
  // A tool call written as text (JSON-action mode, or a model that ignores native tools) is
  // a tool call, never an answer.
  const offered = toolNames(req.toolChoice === 'none' ? [] : req.tools);
  if (offered.size && !choice.message.tool_calls?.length && choice.message.content) {
    const calls = toolCallsInText(choice.message.content, offered);
    if (calls) {
      choice.message.tool_calls = calls;
      choice.message.content = null;
      if (choice.finish_reason === 'stop') choice.finish_reason = 'tool_calls';
    }
  }
}

/** Records the call (with the request that answered it, when not logged yet) and releases the claim. */
async function finish<T>(
  call: Call<T>,
  value: T,
  logged: unknown,
  used: string,
  reused: boolean,
  request?: LoggedRequest,
): Promise<ModelResult<T>> {
  const { deps } = call.state;
  const { tokens, req } = call;
  const usage = pricedUsage(deps.config.llm.prices, call.priced, tokens);
  const record = {
    callKey: call.callKey,
    researchId: req.researchId,
    role: req.role,
    model: used,
    promptName: req.promptName,
    response: logged,
    usage,
    durationMs: Date.now() - call.started,
  };
  await keep(() => deps.calls.record(record, { ...(request ? { request } : {}), release: call.lease.holder }));
  call.lease.released = true;
  return { output: value, model: used, usage, reused };
}
