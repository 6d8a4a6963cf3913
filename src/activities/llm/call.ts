// The one path every model call takes, structured answer or tool calls alike: reuse what an
// earlier attempt of the same activity already paid for, one HTTP call per round, usage summed,
// content filter and refusal checked, at most one repair request, then one row in the call log.
import type OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
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
import type { LlmCallsTable, LlmLeasesTable, LoggedRequest } from '../store/runs';
import { chatCompletion, estimateCostUsd, LlmTimeout } from './client';
import { acquireSlot, createLimiters, type Limiter } from './limiter';
import { isOutage, Providers, type Provider, type Route } from './providers';
import { ANSWER_FUNCTION, CLIPPED, GUIDANCE, JSON_OBJECT, REPAIR_JSON } from './model-call';
import type { PromptOutput, PromptVars, StructuredPrompt } from './prompt-def';
import { renderPart, renderPrompt } from './render';
import { asJsonActions, refusesTools, toolCallsInText, toolNames } from './text-tools';
import { fitRequest, nextScale, probeWindow, promptTokensFromError, windowFromError } from './window';

/** A prompt's response format, converted from its zod schema once (not at every call). */
const responseFormats = new WeakMap<object, ReturnType<typeof zodResponseFormat>>();
function responseFormatOf(schema: Parameters<typeof zodResponseFormat>[0], name: string): ReturnType<typeof zodResponseFormat> {
  let format = responseFormats.get(schema);
  if (!format || format.json_schema.name !== name) responseFormats.set(schema, (format = zodResponseFormat(schema, name)));
  return format;
}

type Choice = OpenAI.Chat.ChatCompletion.Choice;

/** What a caller makes of a reply: the value (and what to log), or a problem to send back once. */
export type ReplyReading<T> = { value: T; logged: unknown } | { problem: string; repair: Message[] };

export interface ModelRequest<T> {
  researchId: string;
  role: LlmRole;
  /** The prompt's file name, for the call log. */
  promptName: string;
  /** Tells apart several calls made by one activity (e.g. extraction retries with a shorter page). */
  key?: string | undefined;
  messages: Message[];
  tools?: OpenAI.Chat.ChatCompletionTool[];
  responseFormat?: OpenAI.ResponseFormatJSONSchema;
  /** An output limit below the role's (a prompt whose answer is short). */
  maxTokens?: number | undefined;
  /** What the caller expected, for the error after a failed repair. */
  expected: string;
  read: (choice: Choice | undefined) => ReplyReading<T>;
  /** The value from a logged response of an attempt that finished the call but not the activity. */
  reuse: (logged: unknown) => T | undefined;
}

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
 * How a structured answer is asked for. Servers differ: OpenAI, vLLM, Ollama and LM Studio take
 * `json_schema`; llama-cpp-python, DeepSeek and DashScope only `json_object` (the schema then goes
 * into the prompt); a server that refuses both can still be forced to call a function whose
 * parameters are the schema. Whatever comes back is parsed with the zod schema all the same.
 */
export type StructuredMode = 'json_schema' | 'json_object' | 'tool';
const NEXT_MODE: Record<StructuredMode, StructuredMode | undefined> = { json_schema: 'json_object', json_object: 'tool', tool: undefined };

/** A 400 that refuses the way we asked for JSON (not the prompt itself). */
export function refusesResponseFormat(err: unknown): boolean {
  if (!(err instanceof ApplicationFailure) || (err.type !== ErrorType.LlmBadRequest && err.type !== ErrorType.LlmUnsupported)) return false;
  return /response_format|json_schema|json_object|structured output|tool_choice|Input should be 'text'/i.test(err.message);
}

/** The request's parameters for one way of asking for JSON. */
export function structuredParams(
  mode: StructuredMode,
  format: OpenAI.ResponseFormatJSONSchema,
  messages: Message[],
): Pick<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'messages' | 'response_format' | 'tools' | 'tool_choice'> {
  const { name, schema } = format.json_schema;
  if (mode === 'json_schema') return { messages, response_format: format };
  if (mode === 'tool') {
    return {
      messages,
      tools: [
        {
          type: 'function',
          function: { name, description: renderPart(ANSWER_FUNCTION, { name }), parameters: schema ?? {} },
        },
      ],
      tool_choice: { type: 'function', function: { name } },
    };
  }
  const note = renderPart(JSON_OBJECT, { name, schema: JSON.stringify(schema) });
  const [first, ...rest] = messages;
  const withNote: Message[] =
    first?.role === 'system'
      ? [{ role: 'system', content: `${String(first.content)}\n\n${note}` }, ...rest]
      : [{ role: 'system', content: note }, ...messages];
  return { messages: withNote, response_format: { type: 'json_object' } };
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

/** JSON out of an answer that may wrap it in a code fence or a sentence. */
export function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
    if (fenced) return JSON.parse(fenced);
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start >= 0 && end > start) return JSON.parse(text.slice(start, end + 1));
    throw err;
  }
}

/** Requests per call: the answer and at most two repairs, each quoting what was wrong. */
const MAX_ROUNDS = 3;
/** Timeouts of one call while its server answers, before the call is "too slow". */
const SLOW_TRIES = 2;
/** Overflow errors of one call that trimming may answer, before it is too long for the model. */
const OVERFLOW_TRIES = 2;
/** A repair quotes at most this much of the answer it repairs: not the whole cut-off text again. */
const REPAIR_QUOTE_CHARS = 600;
/** How long a learned context window (or its absence) is believed. */
const WINDOW_TTL_MS = 10 * 60_000;

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

/** Whether the server answers at all (any HTTP status), within a few seconds: tells "slow" from "down". */
async function answers(baseUrl: string | undefined): Promise<boolean> {
  try {
    await fetch(`${(baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
}

async function fetchJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  if (!res.ok) throw new Error(`${res.status} from ${url}`);
  return res.json();
}

/** Milliseconds this activity attempt has left before its start-to-close timeout, less a margin. */
function attemptTimeLeft(): number {
  const info = Context.current().info;
  if (!info.startToCloseTimeoutMs) return Infinity;
  return info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - Date.now() - 5_000;
}

/** A claim on a call lives this long unless its holder renews it (every LEASE_RENEW_MS). */
const LEASE_TTL_MS = 30_000;
const LEASE_RENEW_MS = 10_000;
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

export function createLlm(deps: LlmDeps) {
  /** The way of asking for JSON each endpoint and model accepted, learned from its refusals. */
  const structuredModes = new Map<string, StructuredMode>();
  /** Endpoints and models that refused `tools`: they get JSON actions (src/activities/llm/text-tools.ts). */
  const jsonActionModels = new Set<string>();
  /** Endpoints and models that want max_completion_tokens instead of max_tokens. */
  const completionTokenModels = new Set<string>();
  /** How far each endpoint's token counts run above the estimate (src/activities/llm/window.ts nextScale). */
  const scales = new Map<string, number>();
  /** Each endpoint's context window: configured, asked of the server, or learned from its overflow error. */
  const windows = new Map<string, { tokens: number | undefined; until: number }>();
  // One set per createLlm, which the worker makes once: provider health and limits are per worker process.
  const providers = deps.providers ?? new Providers(deps.config, deps.client);
  const limiterOf = deps.limiterOf ?? createLimiters(deps.config.llm.providerConcurrency);

  async function windowOf(provider: Provider, modeKey: string, model: string): Promise<number | undefined> {
    if (provider.contextTokens) return provider.contextTokens;
    const known = windows.get(modeKey);
    if (known && known.until > Date.now()) return known.tokens;
    const base = provider.baseUrl;
    const tokens = base ? await probeWindow(base, model, fetchJson) : undefined;
    windows.set(modeKey, { tokens, until: Date.now() + WINDOW_TTL_MS });
    return tokens;
  }

  /**
   * One request of a call, bounded: the role's output limit (lowered to what the window leaves),
   * the role's timeout (within what the attempt has left), the prompt trimmed to the window. It
   * adapts to what the server says: another way of asking for JSON, JSON actions for a server that
   * refuses tools, harder trimming after an overflow. A timeout while the server still answers is
   * "too slow": asked once more with half the output limit, then a non-retryable LlmTooSlow (the
   * role falls back); a timeout while the server does not answer stays transient (an outage).
   *
   * It goes to the primary provider unless that has been down for LLM_FALLBACK_AFTER, and moves to
   * the fallback when the primary refuses it as too long after trimming. An outage before then
   * stays a transient failure: Temporal's retry asks again, and a later attempt finds the fallback.
   * Each HTTP request waits for a slot of its provider's adaptive limit (src/activities/llm/limiter.ts).
   */
  async function ask(
    req: ModelRequest<unknown>,
    messages: Message[],
    outputBoost: number,
  ): Promise<{ completion: OpenAI.Chat.ChatCompletion; mode: StructuredMode; model: string }> {
    const role = req.role;
    // What a provider has taught this request starts over when the request moves to the other one.
    let route!: Route;
    let provider!: Provider;
    let model!: string;
    let modeKey!: string;
    let mode!: StructuredMode;
    let maxTokens!: number;
    let shrink!: number;
    let slow!: number;
    let overflow!: number;
    const use = (next: Route) => {
      route = next;
      provider = next.provider;
      model = provider.models[role];
      modeKey = `${provider.baseUrl ?? 'openai'}|${model}`;
      mode = structuredModes.get(modeKey) ?? 'json_schema';
      maxTokens = Math.round(Math.min(deps.config.llm.maxTokens[role], req.maxTokens ?? Infinity) * outputBoost);
      [shrink, slow, overflow] = [1, 0, 0];
    };
    use(providers.route());
    /** Moves this request to the fallback, when there is one and it is not there yet. */
    const failOver = (reason: 'outage' | 'too_long'): boolean => {
      const fallback = providers.fallback;
      if (!fallback || provider === fallback) return false;
      metrics.llmFailovers.inc({ reason });
      Context.current().log.warn('LLM request moves to the fallback provider', {
        reason,
        from: `${provider.endpoint} (${model})`,
        to: `${fallback.endpoint} (${fallback.models[role]})`,
      });
      use({ provider: fallback, trial: false });
      return true;
    };
    /** Counts an outage failure; true when the request moved to the fallback (the primary is down long enough). */
    const outage = (): boolean => {
      providers.failed(provider);
      return providers.primaryDown() && failOver('outage');
    };
    for (;;) {
      // A trial of a primary believed down first asks whether it answers at all: a dead server
      // would otherwise hold this request for the whole timeout.
      if (route.trial && !(await answers(provider.baseUrl)) && outage()) continue;
      const labels = { model, role };
      const jsonActions = Boolean(req.tools?.length) && jsonActionModels.has(modeKey);
      const base = req.responseFormat ? structuredParams(mode, req.responseFormat, messages) : { messages };
      const tools = req.tools && !jsonActions ? req.tools : undefined;
      const sent = jsonActions ? asJsonActions(base.messages, req.tools!) : base.messages;
      const schemas = JSON.stringify(tools ?? base.tools ?? '') + JSON.stringify(base.response_format ?? '');
      const window = await windowOf(provider, modeKey, model);
      const scale = scales.get(modeKey) ?? 1;
      const fitted = fitRequest({ messages: sent, extra: schemas, maxTokens, window, shrink, scale });
      // What the prompt is counted at without the correction: the base the server's count corrects.
      const estimated = fitted.promptTokens / scale;
      const limitKey = completionTokenModels.has(modeKey) || !provider.baseUrl ? 'max_completion_tokens' : 'max_tokens';
      const slot = await acquireSlot(limiterOf(provider.endpoint));
      const timeoutMs = Math.min(deps.config.llm.timeouts[role], Math.max(5_000, attemptTimeLeft()));
      try {
        const completion = await chatCompletion(
          provider.client(),
          {
            model,
            ...base,
            messages: fitted.messages,
            ...(tools ? { tools, tool_choice: 'auto' as const } : {}),
            [limitKey]: fitted.maxTokens,
          },
          { timeoutMs },
        );
        slot.release('ok');
        providers.succeeded(provider);
        const counted = completion.usage?.prompt_tokens;
        if (counted) scales.set(modeKey, nextScale(scale, estimated, counted));
        return { completion, mode, model };
      } catch (err) {
        const type = err instanceof ApplicationFailure ? err.type : undefined;
        const retryAfterMs = err instanceof ApplicationFailure && typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : undefined;
        slot.release(type === ErrorType.LlmRateLimited ? 'rate-limited' : 'failed', retryAfterMs);
        metrics.llmRequests.inc({ ...labels, outcome: type ? type : err instanceof Error ? err.name : 'error' });
        const next = NEXT_MODE[mode];
        // A refused response_format is not a broken prompt: ask again the next way, and remember it.
        if (req.responseFormat && next && refusesResponseFormat(err)) {
          mode = next;
          structuredModes.set(modeKey, mode);
          continue;
        }
        if (tools && refusesTools(err)) {
          jsonActionModels.add(modeKey);
          continue;
        }
        if (limitKey === 'max_tokens' && err instanceof ApplicationFailure && /max_completion_tokens/.test(err.message)) {
          completionTokenModels.add(modeKey);
          continue;
        }
        if (type === ErrorType.LlmContextLength && overflow < OVERFLOW_TRIES) {
          overflow++;
          const stated = windowFromError((err as Error).message);
          // The count the server gives corrects the estimate before the prompt is cut again.
          const counted = promptTokensFromError((err as Error).message);
          if (counted) scales.set(modeKey, nextScale(scale, estimated, counted));
          // A window we did not know yet is learned; one we trimmed to already means the estimate
          // ran short: the prompt gets less of it.
          if (stated && stated !== window) windows.set(modeKey, { tokens: stated, until: Date.now() + WINDOW_TTL_MS });
          else if (!counted) shrink *= 0.6;
          if (!stated && !window) {
            // Nothing to trim against: assume the prompt as sent was a bit too long.
            windows.set(modeKey, { tokens: Math.floor((fitted.promptTokens + fitted.maxTokens) * 0.8), until: Date.now() + WINDOW_TTL_MS });
          }
          continue;
        }
        // Still too long after trimming: the fallback's model may have the larger window.
        if (type === ErrorType.LlmContextLength && failOver('too_long')) continue;
        if (err instanceof LlmTimeout) {
          // Down: an outage, retried by Temporal (or answered by the fallback once the primary is down long enough).
          if (!(await answers(provider.baseUrl))) {
            if (outage()) continue;
            throw err;
          }
          slow++;
          if (slow >= SLOW_TRIES || attemptTimeLeft() < 10_000) {
            throw ApplicationFailure.nonRetryable(
              `model ${model} did not answer the ${role} role within ${Math.round(timeoutMs / 1000)} s (${slow} time(s), the last with ` +
                `max_tokens ${fitted.maxTokens}) while its server answered: too slow. Raise LLM_TIMEOUT_MS_${role.toUpperCase()} ` +
                `or lower LLM_MAX_TOKENS_${role.toUpperCase()}, or use a faster model.`,
              ErrorType.LlmTooSlow,
            );
          }
          maxTokens = Math.max(64, Math.floor(fitted.maxTokens / 2));
          shrink *= 0.75;
          continue;
        }
        if (isOutage(err) && outage()) continue;
        throw err;
      }
    }
  }

  async function complete<T>(req: ModelRequest<T>): Promise<ModelResult<T>> {
    if (!llmConfigured(deps.config)) throw ApplicationFailure.nonRetryable(LLM_NOT_CONFIGURED_MESSAGE, ErrorType.LlmNotConfigured);
    const callKey = activityCallKey(req.key);
    const model = deps.config.llm.models[req.role];
    const reusable = async (): Promise<ModelResult<T> | undefined> => {
      const earlier = await deps.calls.find(callKey);
      const value = earlier ? req.reuse(earlier.response) : undefined;
      return earlier && value !== undefined ? { output: value, model: earlier.model, usage: earlier.usage, reused: true } : undefined;
    };
    // Only a retry can find an earlier attempt's answer: the first attempt skips the lookups.
    const retry = Context.current().info.attempt > 1;
    const earlier = retry ? await reusable() : undefined;
    if (earlier) return earlier;
    // Two attempts of one activity can be alive at once (a heartbeat timeout during a network cut):
    // the one that claims the call pays for it, the other waits for its answer.
    // The claim's round trip also brings the guidance the user gave the run (steering).
    const holder = `${Context.current().info.attempt}/${randomUUID()}`;
    let claim: { claimed: boolean; guidance: string[] };
    while (!(claim = await deps.leases.claim(callKey, holder, LEASE_TTL_MS, req.researchId)).claimed) {
      Context.current().heartbeat({ waitingFor: 'another attempt of this call' });
      await Context.current().sleep(WAIT_POLL_MS);
      const answered = await reusable();
      if (answered) return answered;
    }
    const renew = setInterval(() => void deps.leases.claim(callKey, holder, LEASE_TTL_MS).catch(() => undefined), LEASE_RENEW_MS);
    // Recording the answer releases the claim in the same statement; otherwise the end does.
    const lease = { holder, released: false };
    try {
      // The previous holder may have answered between our look and our claim.
      return (retry ? await reusable() : undefined) ?? (await send(req, callKey, model, retry, claim.guidance, lease));
    } finally {
      clearInterval(renew);
      if (!lease.released) await deps.leases.release(callKey, holder).catch(() => undefined);
    }
  }

  /**
   * The HTTP rounds of a claimed call: one answer, at most one repair, every request's usage and
   * answer logged in one insert. Answers an earlier attempt logged but did not live to record (a
   * worker killed in between) are read again first, in order, so they are not paid for twice.
   */
  async function send<T>(
    req: ModelRequest<T>,
    callKey: string,
    model: string,
    retry: boolean,
    guidance: string[],
    lease: { holder: string; released: boolean },
  ): Promise<ModelResult<T>> {
    const messages = withGuidance([...req.messages], guidance);
    const tokens = { promptTokens: 0, completionTokens: 0 };
    const started = Date.now();
    let problem = '';
    /** The configured model of the provider that answered last (the fallback's, when it did): prices are by it. */
    let priced = model;
    /** Records the call (with the request that answered it, when not logged yet) and releases the claim. */
    const finish = async (value: T, logged: unknown, used: string, reused: boolean, request?: LoggedRequest): Promise<ModelResult<T>> => {
      const usage = { ...tokens, costUsd: estimateCostUsd(deps.config.llm.prices, priced, tokens.promptTokens, tokens.completionTokens) };
      const record = {
        callKey,
        researchId: req.researchId,
        role: req.role,
        model: used,
        promptName: req.promptName,
        response: logged,
        usage,
        durationMs: Date.now() - started,
      };
      await keep(() => deps.calls.record(record, { ...(request ? { request } : {}), release: lease.holder }));
      lease.released = true;
      return { output: value, model: used, usage, reused };
    };
    let round = 0;
    for (const earlier of retry ? await deps.calls.answers(callKey) : []) {
      if (round >= MAX_ROUNDS - 1) break;
      round++;
      tokens.promptTokens += earlier.usage.promptTokens;
      tokens.completionTokens += earlier.usage.completionTokens;
      const reading = readChoice(req, earlier.answer as Choice | undefined, model);
      if ('problem' in reading) {
        problem = reading.problem;
        messages.push(...repairMessages(reading.repair, (earlier.answer as Choice | undefined)?.finish_reason === 'length'));
        continue;
      }
      return finish(reading.value, reading.logged, earlier.model, true);
    }
    let boost = 1;
    for (; round < MAX_ROUNDS; round++) {
      const sentAt = Date.now();
      const asked = await ask(req as ModelRequest<unknown>, messages, boost);
      const { completion, mode } = asked;
      priced = asked.model;
      const labels = { model: priced, role: req.role };
      metrics.llmSeconds.observe(labels, (Date.now() - sentAt) / 1000);
      const spent = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
      tokens.promptTokens += spent.promptTokens;
      tokens.completionTokens += spent.completionTokens;
      const spentCost = estimateCostUsd(deps.config.llm.prices, priced, spent.promptTokens, spent.completionTokens);
      metrics.llmRequests.inc({ ...labels, outcome: round === 0 ? 'ok' : 'repair' });
      metrics.llmTokens.inc({ ...labels, kind: 'prompt' }, spent.promptTokens);
      metrics.llmTokens.inc({ ...labels, kind: 'completion' }, spent.completionTokens);
      metrics.llmCost.inc(labels, spentCost);
      const choice = completion.choices?.[0];
      if (choice?.message) {
        // A forced function call carries the JSON in its arguments.
        if (req.responseFormat && mode === 'tool' && !choice.message.content) {
          const call = choice.message.tool_calls?.find((t) => t.type === 'function');
          choice.message.content = call?.type === 'function' ? call.function.arguments : null;
          choice.message.tool_calls = [];
        }
        // The marker of a clipped quote never comes back as text of the answer.
        if (typeof choice.message.content === 'string')
          choice.message.content = stripReasoning(choice.message.content).replaceAll(clipped(), '');
        // A tool call written as text (JSON-action mode, or a model that ignores native tools) is
        // a tool call, never an answer.
        const offered = toolNames(req.tools);
        if (offered.size && !choice.message.tool_calls?.length && choice.message.content) {
          const calls = toolCallsInText(choice.message.content, offered);
          if (calls) {
            choice.message.tool_calls = calls;
            choice.message.content = null;
            if (choice.finish_reason === 'stop') choice.finish_reason = 'tool_calls';
          }
        }
      }
      // A paid answer is kept even while PostgreSQL is away (see keep()), with its usage: with the
      // call's record when it is the answer, in the request log alone when it is refused or needs
      // a repair.
      const request: LoggedRequest = { model: completion.model || priced, usage: { ...spent, costUsd: spentCost }, answer: choice ?? null };
      const logAlone = () => keep(() => deps.calls.logRequest({ researchId: req.researchId, callKey, ...request }));
      let reading: ReplyReading<T>;
      try {
        reading = readChoice(req, choice, model);
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
      return finish(reading.value, reading.logged, completion.model || priced, false, request);
    }
    throw ApplicationFailure.nonRetryable(
      `model ${priced} gave no usable ${req.expected} after ${MAX_ROUNDS - 1} repair requests: ${problem}`,
      ErrorType.LlmInvalidOutput,
    );
  }

  /** A registered prompt answered as JSON that its schema accepts. */
  function structured<P extends StructuredPrompt>(
    def: P,
    vars: PromptVars<P>,
    ctx: { researchId: string; key?: string },
  ): Promise<ModelResult<PromptOutput<P>>> {
    const prompt = renderPrompt(def, vars);
    const schema = def.output.schema;
    const parse = (json: unknown) => schema.safeParse(json);
    return complete<PromptOutput<P>>({
      researchId: ctx.researchId,
      role: def.role,
      promptName: def.file,
      maxTokens: def.maxTokens,
      key: ctx.key,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      responseFormat: responseFormatOf(schema, def.output.name),
      expected: def.output.name,
      reuse: (logged) => {
        const parsed = parse(logged);
        return parsed.success ? (parsed.data as PromptOutput<P>) : undefined;
      },
      read: (choice) => {
        const content = choice?.message?.content ?? '';
        const retry = (problem: string, cutOff = false): ReplyReading<never> => ({
          problem,
          repair: [
            { role: 'assistant', content },
            { role: 'user', content: renderPart(REPAIR_JSON, { problem, cutOff }) },
          ],
        });
        let json: unknown;
        try {
          json = parseJsonAnswer(content);
        } catch {
          return choice?.finish_reason === 'length'
            ? retry('the answer was cut off (finish_reason: length)', true)
            : retry(`the answer was not valid JSON: ${content.slice(0, 200)}`);
        }
        const parsed = parse(json);
        if (!parsed.success) {
          return retry(
            `the JSON did not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
          );
        }
        return { value: parsed.data as PromptOutput<P>, logged: parsed.data };
      },
    });
  }

  /** The context window of the role's model, in tokens, when it is known (set or learned). */
  async function contextWindow(role: LlmRole): Promise<number | undefined> {
    if (!llmConfigured(deps.config)) return undefined;
    const model = deps.config.llm.models[role];
    return windowOf(providers.primary, `${deps.config.llm.baseUrl ?? 'openai'}|${model}`, model);
  }

  return { complete, structured, contextWindow };
}
export type Llm = ReturnType<typeof createLlm>;
