// Embeddings through any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp's
// server, LM Studio...). Like the chat client, it never retries by itself: Temporal does, with the
// same mapping of statuses to retry semantics.
import OpenAI, { APIError } from 'openai';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { ErrorType } from '../../shared/errors';
import { mapLlmError } from '../llm/client';

export interface Embedder {
  readonly enabled: boolean;
  readonly model: string;
  /** One vector per text, in order, L2-normalised. */
  embed(texts: string[], signal?: AbortSignal): Promise<{ vectors: number[][]; tokens: number }>;
}

function normalise(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm > 0 ? v.map((x) => x / norm) : v;
}

export function createEmbedder(config: Config['knowledge']['embedding'], client?: OpenAI): Embedder {
  let openai = client;
  const get = () =>
    (openai ??= new OpenAI({
      apiKey: config.apiKey ?? 'not-needed',
      ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      maxRetries: 0,
      timeout: config.timeoutMs,
    }));
  return {
    enabled: config.enabled,
    model: config.model,
    async embed(texts, signal) {
      if (!texts.length) return { vectors: [], tokens: 0 };
      let res: OpenAI.Embeddings.CreateEmbeddingResponse;
      try {
        // Floats, not the client's default base64: some compatible servers (older vLLM, llama.cpp
        // builds) ignore encoding_format and answer floats, others reject base64 outright.
        res = await get().embeddings.create(
          {
            model: config.model,
            input: texts,
            encoding_format: 'float',
            ...(config.dimensions ? { dimensions: config.dimensions } : {}),
          },
          signal ? { signal } : {},
        );
      } catch (err) {
        if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
          throw ApplicationFailure.nonRetryable(
            `embeddings ${err.status} from model ${config.model}: ${err.message}. Check EMBEDDING_API_KEY (or OPENAI_API_KEY) and EMBEDDING_BASE_URL.`,
            ErrorType.LlmAuth,
          );
        }
        throw mapLlmError(err, `${config.model} (embeddings)`);
      }
      const data = [...(res.data ?? [])].sort((a, b) => a.index - b.index);
      if (data.length !== texts.length || data.some((d) => !Array.isArray(d.embedding) || d.embedding.length === 0)) {
        throw ApplicationFailure.nonRetryable(
          `the embeddings endpoint answered ${data.length} vectors for ${texts.length} inputs (model ${config.model})`,
          ErrorType.LlmInvalidOutput,
        );
      }
      const dims = data[0]!.embedding.length;
      if (data.some((d) => d.embedding.length !== dims)) {
        throw ApplicationFailure.nonRetryable(
          `the embeddings of one batch differ in length (model ${config.model})`,
          ErrorType.LlmInvalidOutput,
        );
      }
      return { vectors: data.map((d) => normalise(d.embedding)), tokens: res.usage?.total_tokens ?? 0 };
    },
  };
}

/** Heartbeats while a slow embeddings request runs, so a dead worker's batch is retried soon. */
export async function withHeartbeat<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), 3_000);
  try {
    return await fn(ctx.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}
