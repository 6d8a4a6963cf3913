// The LLM client: one chat completion against any OpenAI-compatible endpoint. The client never
// retries by itself (maxRetries: 0): Temporal owns retries, so each attempt is one HTTP call and
// the retry schedule is visible in the workflow history.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { priceOf } from '../../config/prices';
import type { Usage } from '../../shared/schemas';
import { ErrorType } from '../../shared/errors';
import { shutdownFailure } from '../attempt';
import { startBeat } from '../beat';
import { retryAfterMs } from '../../infra/retry-after';
import { leanFetch } from '../../infra/http';
import { readStream } from './stream';

export function estimateCostUsd(prices: Config['llm']['prices'], model: string, promptTokens: number, completionTokens: number): number {
  const p = priceOf(prices, model);
  if (!p) return 0;
  return Math.round(((promptTokens * p.input + completionTokens * p.output) / 1e6) * 1e6) / 1e6;
}

/** A call's usage: its tokens, their estimated cost, and the tokens whose model has no price
 *  (their cost is unknown: not in costUsd). */
export function pricedUsage(
  prices: Config['llm']['prices'],
  model: string,
  tokens: { promptTokens: number; completionTokens: number },
): Usage {
  const costUsd = estimateCostUsd(prices, model, tokens.promptTokens, tokens.completionTokens);
  const all = tokens.promptTokens + tokens.completionTokens;
  return {
    promptTokens: tokens.promptTokens,
    completionTokens: tokens.completionTokens,
    costUsd,
    ...(all > 0 && !priceOf(prices, model) ? { unpricedTokens: all } : {}),
  };
}

/** A request the client gave up on after its timeout. Transient as such; the call path asks
 *  whether the server still answers to tell "too slow" from "down" (src/activities/llm/call.ts). */
export class LlmTimeout extends Error {
  override readonly name = 'LlmTimeout';
}

/** The server cannot be reached or fails (connection refused or cut, 5xx): transient, and the
 *  kind of failure that counts toward the provider being down (src/activities/llm/providers.ts). */
export class LlmUnavailable extends Error {
  override readonly name = 'LlmUnavailable';
}

/** A server's words for "the prompt does not fit": OpenAI's, vLLM's, llama.cpp's, Ollama's. */
const CONTEXT_WORDS =
  /context length|maximum context|too many tokens|exceeds? the (?:available )?context|context size|context window|exceed_context_size|prompt is too long|input is too long/i;
/** …and for "this server cannot do that at all" (a missing feature, not a bad prompt). */
const UNSUPPORTED_WORDS = /requires --jinja|--embeddings|not supported|does not support|not implemented|unsupported|not_supported_error/i;

/** Maps an OpenAI SDK error to a Temporal failure with the retry semantics in SPEC.md. */
export function mapLlmError(err: unknown, model: string): Error {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof APIUserAbortError) return err; // cancellation: let Temporal see it as such
  if (err instanceof APIConnectionTimeoutError) {
    return new LlmTimeout(`LLM request to model ${model} timed out: ${err.message}`);
  }
  if (err instanceof APIConnectionError) {
    return new LlmUnavailable(`LLM request to model ${model} failed to connect or timed out: ${err.message}`);
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const code = typeof err.code === 'string' ? err.code : '';
    const detail = `LLM ${status} from model ${model}: ${err.message}`;
    if (status === 429) {
      const delay = retryAfterMs(err.headers);
      return ApplicationFailure.create({
        message: detail,
        type: ErrorType.LlmRateLimited,
        nonRetryable: false,
        ...(delay !== undefined ? { nextRetryDelay: Math.max(delay, 100) } : {}),
      });
    }
    if (status === 401 || status === 403) {
      return ApplicationFailure.nonRetryable(`${detail}. Check OPENAI_API_KEY (and OPENAI_BASE_URL) for this endpoint.`, ErrorType.LlmAuth);
    }
    if (code === 'context_length_exceeded' || code === 'exceed_context_size_error' || CONTEXT_WORDS.test(err.message)) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmContextLength);
    }
    // A feature the server lacks is permanent whatever the status (llama.cpp answers 500 for tools
    // without --jinja, 501 for embeddings without --embeddings): the caller switches to its fallback.
    if (status === 501 || ((status === 400 || status === 404 || status >= 500) && UNSUPPORTED_WORDS.test(err.message))) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmUnsupported);
    }
    if (code === 'content_filter' || /content (management )?policy|content filter/i.test(err.message)) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmContentFilter);
    }
    if (status === 400 || status === 404 || status === 422) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmBadRequest);
    }
    if (status >= 500) return new LlmUnavailable(detail); // transient, Temporal backs off
    return new Error(detail); // 408, 409: transient
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * One chat completion from inside an activity: heartbeats while the model thinks (a worker that
 * dies mid-call is noticed within the heartbeat timeout, not the activity's start-to-close
 * timeout), passes cancellation through, and maps errors to retry semantics.
 */
export async function chatCompletion(
  client: OpenAI,
  params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  options: { timeoutMs?: number; stream?: StreamOptions } = {},
): Promise<OpenAI.Chat.ChatCompletion> {
  const ctx = Context.current();
  // Several beats within the heartbeat timeout, however short the operator set it; none for a
  // call answered within the first of them (src/activities/beat.ts).
  const beat = startBeat();
  try {
    if (options.stream) return await streamedCompletion(client, params, requestSignal(ctx), options.timeoutMs, options.stream);
    return await client.chat.completions.create(params, {
      signal: requestSignal(ctx),
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
  } catch (err) {
    throw (
      (err instanceof APIUserAbortError ? shutdownFailure(`an LLM request to ${params.model}`) : undefined) ??
      mapLlmError(err, params.model)
    );
  } finally {
    beat.stop();
  }
}

export interface StreamOptions {
  /** The answer's text so far, after each chunk that added to it. */
  onText: (text: string) => void;
  /** Whether to ask for the usage in the last chunk (a server that refuses stream_options is asked without). */
  usage: boolean;
  /** What the prompt is counted at, for a server that sends no usage. */
  promptTokens: number;
}

/**
 * The same completion asked for as a stream. The client's timeout covers only the wait for the
 * response's headers, which a streaming server sends at once: the whole answer is bounded here,
 * and a stream cut off by it is an LlmTimeout like a slow non-streamed answer.
 */
async function streamedCompletion(
  client: OpenAI,
  params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  signal: AbortSignal,
  timeoutMs: number | undefined,
  s: StreamOptions,
): Promise<OpenAI.Chat.ChatCompletion> {
  const limit = timeoutMs ?? client.timeout;
  const timer = AbortSignal.timeout(limit);
  try {
    const stream = await client.chat.completions.create(
      { ...params, stream: true, ...(s.usage ? { stream_options: { include_usage: true } } : {}) },
      { signal: AbortSignal.any([signal, timer]), timeout: limit },
    );
    return (await readStream(stream, s.onText)).completion(params.model, s.promptTokens);
  } catch (err) {
    if (timer.aborted && !signal.aborted)
      throw new LlmTimeout(`LLM request to model ${params.model} timed out after ${limit} ms while streaming`);
    // A stream cut off midway (the server or the network went away) is an outage, as a refused
    // connection is.
    if (!(err instanceof APIError) && !(err instanceof APIUserAbortError) && !signal.aborted)
      throw new LlmUnavailable(`the stream from model ${params.model} was cut off: ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
}

/**
 * When the request is given up: the run no longer wants the answer (cancelled, paused, reset) or
 * the worker is stopping. An attempt the server has replaced (its heartbeat timed out, as in a
 * network cut, so it is "not found") keeps its request: it stores the answer, and the attempt
 * that replaced it, waiting on the call's claim, takes that answer instead of paying again.
 */
function requestSignal(ctx: Context): AbortSignal {
  const controller = new AbortController();
  const onCancel = () => {
    const d = ctx.cancellationDetails;
    if (!d?.notFound && !d?.timedOut) controller.abort(ctx.cancellationSignal.reason);
  };
  if (ctx.cancellationSignal.aborted) onCancel();
  else ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  return controller.signal;
}

export function createLlmClient(config: Pick<Config, 'llm'>): OpenAI {
  return new OpenAI({
    apiKey: config.llm.apiKey ?? 'not-needed',
    ...(config.llm.baseUrl ? { baseURL: config.llm.baseUrl } : {}),
    maxRetries: 0,
    timeout: config.llm.timeoutMs,
    fetch: leanFetch,
  });
}
