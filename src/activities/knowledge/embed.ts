// Embeddings through any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp's
// server, LM Studio...). Like the chat client, it never retries by itself: Temporal does, with the
// same mapping of statuses to retry semantics, except for an endpoint that says it has no
// embeddings at all (llama-server without --embeddings, a chat-only model): that is permanent,
// remembered for a few minutes, and the callers fall back to full-text retrieval.
import OpenAI, { APIError } from 'openai';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { ErrorType } from '../../shared/errors';
import { mapLlmError } from '../llm/client';
import { beating } from '../beat';

export interface Embedder {
  readonly enabled: boolean;
  readonly model: string;
  /** The base URL requests go to, for messages. */
  readonly endpoint: string;
  /** One vector per text, in order, L2-normalised. Throws an LlmUnsupported failure, without a
   *  request while it is remembered, for an endpoint that has no embeddings. */
  embed(texts: string[], signal?: AbortSignal): Promise<{ vectors: number[][]; tokens: number }>;
}

export const DEFAULT_EMBEDDINGS_URL = 'https://api.openai.com/v1';

/** How long "this endpoint has no embeddings" is believed before it is asked again: a server may
 *  be restarted with --embeddings, and one request every few minutes is cheap. */
export const UNSUPPORTED_RECHECK_MS = 5 * 60_000;

/**
 * Which endpoints said they have no embeddings, and until when that is believed. One per process
 * by default (`embeddingSupport`), shared by every embedder of that endpoint and model, so the
 * dev banner's probe spares the worker's first call its failing request.
 */
export class EmbeddingSupport {
  private readonly missing = new Map<string, { until: number; message: string }>();
  constructor(
    private readonly now: () => number = Date.now,
    readonly recheckMs = UNSUPPORTED_RECHECK_MS,
  ) {}
  /** The remembered failure message, while it is still believed. */
  unsupported(key: string): string | undefined {
    const entry = this.missing.get(key);
    if (entry && entry.until > this.now()) return entry.message;
    this.missing.delete(key);
    return undefined;
  }
  markUnsupported(key: string, message: string): void {
    this.missing.set(key, { until: this.now() + this.recheckMs, message });
  }
  markSupported(key: string): void {
    this.missing.delete(key);
  }
}

export const embeddingSupport = new EmbeddingSupport();

export const supportKey = (endpoint: string, model: string) => `${endpoint.replace(/\/+$/, '')} ${model}`;

// llama-server: 501 "This server does not support embeddings. Start it with `--embeddings`";
// Ollama and vLLM with a chat model: 400 "... does not support embeddings" / "... Embeddings API".
const MISSING_FEATURE = /not[ _]supported|does not support embedding|--embedding/i;

/**
 * The status and message of an answer that says the endpoint has no embeddings: a 501, a 404 (this
 * client only calls the embeddings path, so the path or its model is not there), or any other
 * 4xx/5xx that names the missing feature. Undefined for everything else (outages, 429, auth).
 */
export function missingEmbeddings(err: unknown): { status: number; detail: string } | undefined {
  if (!(err instanceof APIError) || err.status === undefined) return undefined;
  const status = err.status;
  if (status === 401 || status === 403 || status === 408 || status === 429) return undefined;
  const type = (err as { type?: unknown }).type;
  const named = MISSING_FEATURE.test(err.message) || (typeof type === 'string' && MISSING_FEATURE.test(type));
  if (status === 501 || status === 404 || (status >= 400 && named)) return { status, detail: err.message };
  // The chat client's reading of "a feature the server lacks" counts too: one rule for both.
  return isEmbeddingsUnsupported(mapLlmError(err, 'embeddings')) ? { status, detail: err.message } : undefined;
}

/** What an operator reads: what the endpoint said, and the two ways to get embeddings. */
export function unsupportedMessage(endpoint: string, model: string, status: number, detail: string): string {
  return (
    `the embeddings endpoint ${endpoint} has no embeddings for model ${model} (${status}: ${detail}). ` +
    `Start llama-server with --embeddings (with an embedding model), or set EMBEDDING_BASE_URL and EMBEDDING_MODEL ` +
    `(EMBEDDING_API_KEY if it needs one) to a server that has one. Until then knowledge search uses full-text retrieval only.`
  );
}

/** True for the failure an embedder throws for an endpoint without embeddings. */
export function isEmbeddingsUnsupported(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure && err.type === ErrorType.LlmUnsupported;
}

function normalise(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm > 0 ? v.map((x) => x / norm) : v;
}

export function createEmbedder(
  config: Config['knowledge']['embedding'],
  opts: { client?: OpenAI; support?: EmbeddingSupport } = {},
): Embedder {
  let openai = opts.client;
  const support = opts.support ?? embeddingSupport;
  const endpoint = config.baseUrl ?? DEFAULT_EMBEDDINGS_URL;
  const key = supportKey(endpoint, config.model);
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
    endpoint,
    async embed(texts, signal) {
      if (!texts.length) return { vectors: [], tokens: 0 };
      const remembered = support.unsupported(key);
      if (remembered) throw ApplicationFailure.nonRetryable(remembered, ErrorType.LlmUnsupported);
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
        const missing = missingEmbeddings(err);
        if (missing) {
          const message = unsupportedMessage(endpoint, config.model, missing.status, missing.detail);
          support.markUnsupported(key, message);
          throw ApplicationFailure.nonRetryable(message, ErrorType.LlmUnsupported);
        }
        throw mapLlmError(err, `${config.model} (embeddings)`);
      }
      support.markSupported(key);
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
  return beating(() => fn(ctx.cancellationSignal));
}
