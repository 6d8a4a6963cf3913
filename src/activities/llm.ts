// The LLM activity: one chat completion against any OpenAI-compatible endpoint. The client never
// retries by itself (maxRetries: 0): Temporal owns retries, so each attempt is one HTTP call and
// the retry schedule is visible in the workflow history.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { z } from 'zod';
import type { Config } from '../config';
import { llmConfigured } from '../config';
import type { LlmRole } from '../shared/constants';
import { ErrorType, LLM_NOT_CONFIGURED_MESSAGE } from '../shared/errors';
import {
  StructuredSchemas,
  type StructuredOutput,
  type StructuredSchemaName,
  type Usage,
} from '../shared/schemas';
import { renderPrompt, untrusted } from './prompts';
import type { LlmCallStore } from './store';

export interface StructuredCallInput<N extends StructuredSchemaName = StructuredSchemaName> {
  researchId: string;
  role: LlmRole;
  prompt: string;
  /** Template variables; values marked untrusted by the prompt are wrapped here, not in workflows. */
  vars: Record<string, string | number>;
  /** Variables holding text from outside (user, web): wrapped in delimited blocks before rendering. */
  untrustedVars?: string[];
  schema: N;
}

export interface StructuredCallResult<N extends StructuredSchemaName = StructuredSchemaName> {
  output: StructuredOutput<N>;
  model: string;
  usage: Usage;
  /** True when the answer came from the call log (an earlier attempt finished but did not report). */
  reused: boolean;
}

export interface LlmDeps {
  config: Pick<Config, 'llm'>;
  calls: LlmCallStore;
  /** Injected for tests; defaults to a client built from config. */
  client?: OpenAI;
}

const HEARTBEAT_EVERY_MS = 3_000;

export function estimateCostUsd(prices: Config['llm']['prices'], model: string, promptTokens: number, completionTokens: number): number {
  const p = prices[model];
  if (!p) return 0;
  return Math.round(((promptTokens * p.input + completionTokens * p.output) / 1e6) * 1e6) / 1e6;
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Maps an OpenAI SDK error to a Temporal failure with the retry semantics in SPEC.md. */
export function mapLlmError(err: unknown, model: string): Error {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof APIUserAbortError) return err; // cancellation: let Temporal see it as such
  if (err instanceof APIConnectionTimeoutError || err instanceof APIConnectionError) {
    return new Error(`LLM request to model ${model} failed to connect or timed out: ${err.message}`);
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const code = typeof err.code === 'string' ? err.code : '';
    const detail = `LLM ${status} from model ${model}: ${err.message}`;
    if (status === 429) {
      const delay = retryAfterMs(err.headers);
      return ApplicationFailure.create({
        message: detail,
        type: 'LlmRateLimited',
        nonRetryable: false,
        ...(delay !== undefined ? { nextRetryDelay: Math.max(delay, 100) } : {}),
      });
    }
    if (status === 401 || status === 403) {
      return ApplicationFailure.nonRetryable(
        `${detail}. Check OPENAI_API_KEY (and OPENAI_BASE_URL) for this endpoint.`,
        ErrorType.LlmAuth,
      );
    }
    if (code === 'context_length_exceeded' || /context length|maximum context|too many tokens/i.test(err.message)) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmContextLength);
    }
    if (code === 'content_filter' || /content (management )?policy|content filter/i.test(err.message)) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmContentFilter);
    }
    if (status === 400 || status === 404 || status === 422) {
      return ApplicationFailure.nonRetryable(detail, ErrorType.LlmBadRequest);
    }
    return new Error(detail); // 408, 409, 5xx: transient, Temporal backs off
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
): Promise<OpenAI.Chat.ChatCompletion> {
  const ctx = Context.current();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await client.chat.completions.create(params, { signal: ctx.cancellationSignal });
  } catch (err) {
    throw mapLlmError(err, params.model);
  } finally {
    clearInterval(beat);
  }
}

export function createLlmClient(config: Pick<Config, 'llm'>): OpenAI {
  return new OpenAI({
    apiKey: config.llm.apiKey ?? 'not-needed',
    ...(config.llm.baseUrl ? { baseURL: config.llm.baseUrl } : {}),
    maxRetries: 0,
    timeout: config.llm.timeoutMs,
  });
}

/** One structured LLM call, logged by the calling activity's identity (plus `key` if it makes several). */
export type CallStructured = <N extends StructuredSchemaName>(input: StructuredCallInput<N> & { key?: string }) => Promise<StructuredCallResult<N>>;

export function createLlmCaller(deps: LlmDeps): CallStructured {
  let client = deps.client;

  return async function callStructured<N extends StructuredSchemaName>(input: StructuredCallInput<N> & { key?: string }): Promise<StructuredCallResult<N>> {
    if (!llmConfigured(deps.config)) {
      throw ApplicationFailure.nonRetryable(LLM_NOT_CONFIGURED_MESSAGE, ErrorType.LlmNotConfigured);
    }
    const schema = StructuredSchemas[input.schema] as unknown as z.ZodType<StructuredOutput<N>>;
    if (!schema) throw ApplicationFailure.nonRetryable(`unknown schema ${String(input.schema)}`, ErrorType.InvalidInput);
    const ctx = Context.current();
    const info = ctx.info;
    // Stable across attempts of this activity, unique across the history: the call's identity.
    const callKey = `${info.workflowExecution?.runId ?? 'standalone'}/${info.activityId}${input.key ? `/${input.key}` : ''}`;
    const model = deps.config.llm.models[input.role];

    const earlier = await deps.calls.findCall(callKey);
    if (earlier) {
      const parsed = schema.safeParse(earlier.response);
      if (parsed.success) return { output: parsed.data, model: earlier.model, usage: earlier.usage, reused: true };
    }

    const vars = { ...input.vars };
    for (const name of input.untrustedVars ?? []) {
      if (vars[name] !== undefined) vars[name] = untrusted(name === 'question' ? 'user_message' : name, String(vars[name]));
    }
    const prompt = renderPrompt(input.prompt, vars);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ];
    client ??= createLlmClient(deps.config);
    const started = Date.now();
    const usage = { promptTokens: 0, completionTokens: 0 };
    const responseFormat = zodResponseFormat(schema, input.schema);

    let lastProblem = '';
    // One answer plus at most one repair request that quotes what was wrong with the first.
    for (let round = 0; round < 2; round++) {
      const completion = await chatCompletion(client, { model, messages, response_format: responseFormat });
      usage.promptTokens += completion.usage?.prompt_tokens ?? 0;
      usage.completionTokens += completion.usage?.completion_tokens ?? 0;
      const choice = completion.choices?.[0];
      if (choice?.finish_reason === 'content_filter') {
        throw ApplicationFailure.nonRetryable(`model ${model} refused: content filter`, ErrorType.LlmContentFilter);
      }
      const content = choice?.message?.content ?? '';
      const refusal = choice?.message?.refusal;
      if (refusal) throw ApplicationFailure.nonRetryable(`model ${model} refused: ${refusal}`, ErrorType.LlmContentFilter);
      let json: unknown;
      try {
        json = JSON.parse(content);
      } catch {
        lastProblem =
          choice?.finish_reason === 'length'
            ? 'the answer was cut off (finish_reason: length); answer again, more briefly'
            : `the answer was not valid JSON: ${content.slice(0, 200)}`;
        messages.push({ role: 'assistant', content }, { role: 'user', content: `Your previous answer could not be used: ${lastProblem}. Reply with JSON that matches the schema, and nothing else.` });
        continue;
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        lastProblem = `the JSON did not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
        messages.push({ role: 'assistant', content }, { role: 'user', content: `Your previous answer could not be used: ${lastProblem}. Reply with JSON that matches the schema, and nothing else.` });
        continue;
      }
      const result: StructuredCallResult<N> = {
        output: parsed.data,
        model: completion.model || model,
        usage: {
          ...usage,
          costUsd: estimateCostUsd(deps.config.llm.prices, model, usage.promptTokens, usage.completionTokens),
        },
        reused: false,
      };
      await deps.calls.recordCall({
        callKey,
        researchId: input.researchId,
        role: input.role,
        model: result.model,
        promptName: input.prompt,
        response: parsed.data,
        usage: result.usage,
        durationMs: Date.now() - started,
      });
      return result;
    }
    throw ApplicationFailure.nonRetryable(
      `model ${model} gave no usable ${input.schema} after a repair request: ${lastProblem}`,
      ErrorType.LlmInvalidOutput,
    );
  };
}
