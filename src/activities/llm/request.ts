// One HTTP request of a model call, bounded and adapted to what the server says (call.ts makes the
// rounds of a call from these). What the endpoints teach (the way of asking for JSON they accept,
// JSON actions for a server that refuses tools, their context windows and how far their token
// counts run above the estimate) is kept per createLlm, which the worker makes once.
import { plural } from '../../shared/plural';
import type OpenAI from 'openai';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { ErrorType } from '../../shared/errors';
import { metrics } from '../../infra/metrics';
import type { Message } from '../store';
import type { ModelRequest } from './model-request';
import { chatCompletion, LlmTimeout } from './client';
import { estimatedUsage } from './stream';
import { acquireSlot, type Limiter, type Slot } from './limiter';
import { ANSWER_FUNCTION, JSON_OBJECT } from './model-call';
import { isOutage, type Provider, type Providers, type Route } from './providers';
import { renderPart } from './render';
import { asJsonActions, refusesTools } from './text-tools';
import { fitRequest, nextScale, probeWindow, promptTokensFromError, publishedWindow, windowFromError } from './window';

/**
 * How a structured answer is asked for. Servers differ: OpenAI, vLLM, Ollama and LM Studio take
 * `json_schema`; llama-cpp-python, DeepSeek and DashScope only `json_object` (the schema then goes
 * into the prompt); a server that refuses both can still be forced to call a function whose
 * parameters are the schema. Whatever comes back is parsed with the zod schema all the same.
 */
export type StructuredMode = 'json_schema' | 'json_object' | 'tool';
const NEXT_MODE: Record<StructuredMode, StructuredMode | undefined> = { json_schema: 'json_object', json_object: 'tool', tool: undefined };

/** Timeouts of one call while its server answers, before the call is "too slow". */
const SLOW_TRIES = 2;
/** Overflow errors of one call that trimming may answer, before it is too long for the model. */
const OVERFLOW_TRIES = 2;
/** How long a learned context window (or its absence) is believed. */
const WINDOW_TTL_MS = 10 * 60_000;

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
 * The tools of a request that has them: offered to the model ('auto'), or sent as the conversation
 * had them while the answer may not call them ('none'), beside the function a structured answer is
 * forced into when the server takes JSON only that way.
 */
function toolParams(
  base: Prepared['base'],
  tools: OpenAI.Chat.ChatCompletionTool[],
  choice: 'none' | undefined,
): Pick<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'tools' | 'tool_choice'> {
  if ('tool_choice' in base && base.tool_choice) return { tools: [...tools, ...(base.tools ?? [])], tool_choice: base.tool_choice };
  return { tools, tool_choice: choice ?? 'auto' };
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
export function attemptTimeLeft(): number {
  const info = Context.current().info;
  if (!info.startToCloseTimeoutMs) return Infinity;
  return info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - Date.now() - 5_000;
}

/** What the endpoints taught, and the providers with their health and limits: one set per worker process. */
export interface Endpoints {
  config: Pick<Config, 'llm'>;
  providers: Providers;
  limiterOf: (endpoint: string) => Limiter;
  /** The way of asking for JSON each endpoint and model accepted, learned from its refusals. */
  structuredModes: Map<string, StructuredMode>;
  /** Endpoints and models that refused `tools`: they get JSON actions (src/activities/llm/text-tools.ts). */
  jsonActionModels: Set<string>;
  /** Endpoints and models that want max_completion_tokens instead of max_tokens. */
  completionTokenModels: Set<string>;
  /** Endpoints and models that refused `stream`: a streamed call is asked for whole there. */
  noStream: Set<string>;
  /** …and those that refused `stream_options` (the usage in the last chunk): asked without it. */
  noStreamUsage: Set<string>;
  /** How far each endpoint's token counts run above the estimate (src/activities/llm/window.ts nextScale). */
  scales: Map<string, number>;
  /** Each endpoint's context window: configured, asked of the server, or learned from its overflow error. */
  windows: Map<string, { tokens: number | undefined; until: number }>;
}

export function createEndpoints(config: Pick<Config, 'llm'>, providers: Providers, limiterOf: (endpoint: string) => Limiter): Endpoints {
  return {
    config,
    providers,
    limiterOf,
    structuredModes: new Map(),
    jsonActionModels: new Set(),
    completionTokenModels: new Set(),
    noStream: new Set(),
    noStreamUsage: new Set(),
    scales: new Map(),
    windows: new Map(),
  };
}

/** The context window of a provider's model, in tokens, when it is known (set, asked, published
 *  for a common hosted model, or learned). */
export async function windowOf(e: Endpoints, provider: Provider, modeKey: string, model: string): Promise<number | undefined> {
  if (provider.contextTokens) return provider.contextTokens;
  const known = e.windows.get(modeKey);
  if (known && known.until > Date.now()) return known.tokens;
  const base = provider.baseUrl;
  const tokens = (base ? await probeWindow(base, model, fetchJson) : undefined) ?? publishedWindow(model);
  e.windows.set(modeKey, { tokens, until: Date.now() + WINDOW_TTL_MS });
  return tokens;
}

export type Asked = { completion: OpenAI.Chat.ChatCompletion; mode: StructuredMode; model: string };

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
export async function ask(e: Endpoints, req: ModelRequest<unknown>, messages: Message[], outputBoost: number): Promise<Asked> {
  const run = new RequestRun(e, req, outputBoost);
  for (;;) {
    // A trial of a primary believed down first asks whether it answers at all: a dead server
    // would otherwise hold this request for the whole timeout.
    if (run.route.trial && !(await answers(run.provider.baseUrl)) && run.outage()) continue;
    const prepared = await run.prepare(messages);
    const slot = await acquireSlot(e.limiterOf(run.provider.endpoint));
    // The time left is taken once the slot is there: waiting for it spends the attempt's time.
    prepared.timeoutMs = Math.min(e.config.llm.timeouts[req.role], Math.max(5_000, attemptTimeLeft()));
    try {
      return await run.send(prepared, slot);
    } catch (err) {
      if (!(await run.adapt(err, prepared))) throw err;
    }
  }
}

/** A request as it goes out this time: its parameters, and what it was fitted to. */
interface Prepared {
  base: ReturnType<typeof structuredParams> | { messages: Message[] };
  tools: OpenAI.Chat.ChatCompletionTool[] | undefined;
  fitted: ReturnType<typeof fitRequest>;
  window: number | undefined;
  scale: number;
  /** What the prompt is counted at without the correction: the base the server's count corrects. */
  estimated: number;
  limitKey: 'max_tokens' | 'max_completion_tokens';
  /** Set when the request has its slot. */
  timeoutMs: number;
}

/** One request and what its provider has taught it; that starts over when it moves to the other provider. */
class RequestRun {
  route!: Route;
  provider!: Provider;
  model!: string;
  modeKey!: string;
  mode!: StructuredMode;
  maxTokens!: number;
  shrink = 1;
  slow = 0;
  overflow = 0;

  constructor(
    private readonly e: Endpoints,
    private readonly req: ModelRequest<unknown>,
    private readonly outputBoost: number,
  ) {
    this.use(e.providers.route());
  }

  use(next: Route): void {
    const role = this.req.role;
    this.route = next;
    this.provider = next.provider;
    // A call that names its model (a report rewrite's) asks the primary for it; the fallback keeps its own.
    this.model = (this.provider.name === 'primary' && this.req.model) || this.provider.models[role];
    this.modeKey = `${this.provider.baseUrl ?? 'openai'}|${this.model}`;
    this.mode = this.e.structuredModes.get(this.modeKey) ?? 'json_schema';
    this.maxTokens = Math.round(Math.min(this.e.config.llm.maxTokens[role], this.req.maxTokens ?? Infinity) * this.outputBoost);
    [this.shrink, this.slow, this.overflow] = [1, 0, 0];
  }

  /** Moves this request to the fallback, when there is one and it is not there yet. */
  failOver(reason: 'outage' | 'too_long'): boolean {
    const fallback = this.e.providers.fallback;
    if (!fallback || this.provider === fallback) return false;
    metrics.llmFailovers.inc({ reason });
    Context.current().log.warn('LLM request moves to the fallback provider', {
      reason,
      from: `${this.provider.endpoint} (${this.model})`,
      to: `${fallback.endpoint} (${fallback.models[this.req.role]})`,
    });
    this.use({ provider: fallback, trial: false });
    return true;
  }

  /** Counts an outage failure; true when the request moved to the fallback (the primary is down long enough). */
  outage(): boolean {
    this.e.providers.failed(this.provider);
    return this.e.providers.primaryDown() && this.failOver('outage');
  }

  async prepare(messages: Message[]): Promise<Prepared> {
    const { e, req, modeKey } = this;
    const jsonActions = Boolean(req.tools?.length) && e.jsonActionModels.has(modeKey);
    const base = req.responseFormat ? structuredParams(this.mode, req.responseFormat, messages) : { messages };
    const tools = req.tools && !jsonActions ? req.tools : undefined;
    const sent = jsonActions ? asJsonActions(base.messages, req.tools!) : base.messages;
    const schemas =
      JSON.stringify(tools ?? ('tools' in base ? base.tools : undefined) ?? '') +
      JSON.stringify(('response_format' in base ? base.response_format : undefined) ?? '');
    const window = await windowOf(e, this.provider, modeKey, this.model);
    const scale = e.scales.get(modeKey) ?? 1;
    const fitted = fitRequest({ messages: sent, extra: schemas, maxTokens: this.maxTokens, window, shrink: this.shrink, scale });
    const limitKey = e.completionTokenModels.has(modeKey) || !this.provider.baseUrl ? 'max_completion_tokens' : 'max_tokens';
    return { base, tools, fitted, window, scale, estimated: fitted.promptTokens / scale, limitKey, timeoutMs: 0 };
  }

  /** The HTTP request, in a slot of the provider's limit; the slot learns how it went. */
  async send(p: Prepared, slot: Slot): Promise<Asked> {
    const { e, provider, model, modeKey } = this;
    const sink = this.req.stream;
    const stream = sink && !e.noStream.has(modeKey) ? sink : undefined;
    stream?.begin();
    try {
      const completion = await chatCompletion(
        provider.client(),
        {
          model,
          ...p.base,
          messages: p.fitted.messages,
          ...(p.tools ? toolParams(p.base, p.tools, this.req.toolChoice) : {}),
          [p.limitKey]: p.fitted.maxTokens,
        },
        {
          timeoutMs: p.timeoutMs,
          ...(stream
            ? {
                stream: {
                  onText: (raw: string) => stream.update(raw),
                  usage: !e.noStreamUsage.has(modeKey),
                  promptTokens: Math.round(p.fitted.promptTokens),
                },
              }
            : {}),
        },
      );
      slot.release('ok');
      e.providers.succeeded(provider);
      const counted = estimatedUsage.has(completion) ? undefined : completion.usage?.prompt_tokens;
      if (counted) e.scales.set(modeKey, nextScale(p.scale, p.estimated, counted));
      return { completion, mode: this.mode, model };
    } catch (err) {
      const type = err instanceof ApplicationFailure ? err.type : undefined;
      const retryAfterMs = err instanceof ApplicationFailure && typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : undefined;
      slot.release(type === ErrorType.LlmRateLimited ? 'rate-limited' : 'failed', retryAfterMs);
      metrics.llmRequests.inc({ model, role: this.req.role, outcome: type ? type : err instanceof Error ? err.name : 'error' });
      throw err;
    }
  }

  /** After a failed request: true when it is worth asking again (adapted to the error), false to fail. */
  async adapt(err: unknown, p: Prepared): Promise<boolean> {
    const { e, req, modeKey } = this;
    const type = err instanceof ApplicationFailure ? err.type : undefined;
    const next = NEXT_MODE[this.mode];
    // A refused response_format is not a broken prompt: ask again the next way, and remember it.
    if (req.responseFormat && next && refusesResponseFormat(err)) {
      this.mode = next;
      e.structuredModes.set(modeKey, next);
      return true;
    }
    if (p.tools && refusesTools(err)) {
      e.jsonActionModels.add(modeKey);
      return true;
    }
    // A server that cannot stream (or send the usage at a stream's end) is asked the plain way.
    if (req.stream && err instanceof ApplicationFailure && (type === ErrorType.LlmBadRequest || type === ErrorType.LlmUnsupported)) {
      if (/stream_options|include_usage/i.test(err.message) && !e.noStreamUsage.has(modeKey)) {
        e.noStreamUsage.add(modeKey);
        return true;
      }
      if (/\bstream/i.test(err.message) && !e.noStream.has(modeKey)) {
        e.noStream.add(modeKey);
        return true;
      }
    }
    if (p.limitKey === 'max_tokens' && err instanceof ApplicationFailure && /max_completion_tokens/.test(err.message)) {
      e.completionTokenModels.add(modeKey);
      return true;
    }
    if (type === ErrorType.LlmContextLength && this.overflow < OVERFLOW_TRIES) {
      this.overflow++;
      this.learnWindow((err as Error).message, p);
      return true;
    }
    // Still too long after trimming: the fallback's model may have the larger window.
    if (type === ErrorType.LlmContextLength && this.failOver('too_long')) return true;
    if (err instanceof LlmTimeout) return this.afterTimeout(err, p);
    return isOutage(err) && this.outage();
  }

  /** After an overflow: what the error says about the window and the prompt's size. */
  private learnWindow(message: string, p: Prepared): void {
    const { e, modeKey } = this;
    const stated = windowFromError(message);
    // The count the server gives corrects the estimate before the prompt is cut again.
    const counted = promptTokensFromError(message);
    if (counted) e.scales.set(modeKey, nextScale(p.scale, p.estimated, counted));
    // A window we did not know yet is learned; one we trimmed to already means the estimate
    // ran short: the prompt gets less of it.
    if (stated && stated !== p.window) e.windows.set(modeKey, { tokens: stated, until: Date.now() + WINDOW_TTL_MS });
    else if (!counted) this.shrink *= 0.6;
    if (!stated && !p.window) {
      // Nothing to trim against: assume the prompt as sent was a bit too long.
      e.windows.set(modeKey, { tokens: Math.floor((p.fitted.promptTokens + p.fitted.maxTokens) * 0.8), until: Date.now() + WINDOW_TTL_MS });
    }
  }

  /** After a timeout: down is an outage; slow is asked once more with half the output limit, then too slow. */
  private async afterTimeout(err: LlmTimeout, p: Prepared): Promise<boolean> {
    const role = this.req.role;
    // Down: an outage, retried by Temporal (or answered by the fallback once the primary is down long enough).
    if (!(await answers(this.provider.baseUrl))) {
      if (this.outage()) return true;
      throw err;
    }
    this.slow++;
    if (this.slow >= SLOW_TRIES || attemptTimeLeft() < 10_000) {
      throw ApplicationFailure.nonRetryable(
        `model ${this.model} did not answer the ${role} role within ${Math.round(p.timeoutMs / 1000)} s (${plural(this.slow, 'time')}, the last with ` +
          `max_tokens ${p.fitted.maxTokens}) while its server answered: too slow. Raise LLM_TIMEOUT_MS_${role.toUpperCase()} ` +
          `or lower LLM_MAX_TOKENS_${role.toUpperCase()}, or use a faster model.`,
        ErrorType.LlmTooSlow,
      );
    }
    this.maxTokens = Math.max(64, Math.floor(p.fitted.maxTokens / 2));
    this.shrink *= 0.75;
    return true;
  }
}
