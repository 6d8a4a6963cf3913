// What the LLM server really offers, asked once when `dev` starts, so that its banner says what is
// there rather than what is configured: the models list and one tiny embeddings request, each
// bounded by a short timeout. It never throws (a server that is down is "not reachable"), and an
// endpoint without embeddings is remembered in the process's capability cache, so the worker
// `dev` runs beside it does not pay a failing request on its first knowledge search.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { llmConfigured, type Config } from '../../config';
import { summarize } from '../../shared/plain';
import {
  DEFAULT_EMBEDDINGS_URL,
  embeddingSupport,
  missingEmbeddings,
  supportKey,
  unsupportedMessage,
  type EmbeddingSupport,
} from './embed';

/** Short enough that a dev start is not held up; long enough for a server on this machine. */
export const PROBE_TIMEOUT_MS = 2_000;

export type ModelsProbe = { state: 'ok'; ids: string[] } | { state: 'unreachable' | 'error'; reason: string } | { state: 'not configured' };

export type EmbeddingsProbe =
  | { state: 'ok'; dims: number }
  | { state: 'unsupported'; status: number; detail: string }
  | { state: 'unreachable' | 'error'; reason: string }
  | { state: 'off' };

export interface ServerProbe {
  models: ModelsProbe;
  embeddings: EmbeddingsProbe;
}

type ProbeConfig = Pick<Config, 'llm'> & { knowledge: Pick<Config['knowledge'], 'embedding'> };

/** Connection refused, no answer in time: the server is not there (yet). */
function unreachable(err: unknown, timeoutMs: number): string | undefined {
  if (err instanceof APIUserAbortError || err instanceof APIConnectionTimeoutError) return `no answer within ${timeoutMs / 1000} s`;
  if (!(err instanceof APIConnectionError)) return undefined;
  // The socket's code (ECONNREFUSED, ENOTFOUND) sits a cause or two below the SDK's error.
  for (let e: unknown = err.cause; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return err.message;
}

function failureReason(err: unknown): string {
  if (err instanceof APIError) return summarize(`${err.status ?? ''} ${err.message}`.trim(), 120);
  return summarize(err instanceof Error ? err.message : String(err), 120);
}

/** The models the LLM provider's list serves, or undefined when it does not answer with one. */
export async function listedModels(config: Pick<Config, 'llm'>, timeoutMs = PROBE_TIMEOUT_MS): Promise<string[] | undefined> {
  const p = await probeModels(config, timeoutMs);
  return p.state === 'ok' ? p.ids : undefined;
}

async function probeModels(config: Pick<Config, 'llm'>, timeoutMs: number): Promise<ModelsProbe> {
  if (!llmConfigured(config)) return { state: 'not configured' };
  const client = new OpenAI({
    apiKey: config.llm.apiKey ?? 'not-needed',
    ...(config.llm.baseUrl ? { baseURL: config.llm.baseUrl } : {}),
    maxRetries: 0,
    timeout: timeoutMs,
  });
  try {
    const page = await client.models.list({ signal: AbortSignal.timeout(timeoutMs) });
    return { state: 'ok', ids: page.data.map((m) => m.id) };
  } catch (err) {
    const down = unreachable(err, timeoutMs);
    return down ? { state: 'unreachable', reason: down } : { state: 'error', reason: failureReason(err) };
  }
}

async function probeEmbeddings(config: ProbeConfig, timeoutMs: number, support: EmbeddingSupport): Promise<EmbeddingsProbe> {
  const e = config.knowledge.embedding;
  if (!e.enabled) return { state: 'off' };
  const endpoint = e.baseUrl ?? DEFAULT_EMBEDDINGS_URL;
  const client = new OpenAI({ apiKey: e.apiKey ?? 'not-needed', baseURL: endpoint, maxRetries: 0, timeout: timeoutMs });
  try {
    const res = await client.embeddings.create(
      { model: e.model, input: 'ping', encoding_format: 'float', ...(e.dimensions ? { dimensions: e.dimensions } : {}) },
      { signal: AbortSignal.timeout(timeoutMs) },
    );
    support.markSupported(supportKey(endpoint, e.model));
    return { state: 'ok', dims: res.data[0]?.embedding.length ?? 0 };
  } catch (err) {
    const missing = missingEmbeddings(err);
    if (missing) {
      support.markUnsupported(supportKey(endpoint, e.model), unsupportedMessage(endpoint, e.model, missing.status, missing.detail));
      return { state: 'unsupported', ...missing };
    }
    const down = unreachable(err, timeoutMs);
    return down ? { state: 'unreachable', reason: down } : { state: 'error', reason: failureReason(err) };
  }
}

/** Both probes side by side, within about `timeoutMs`. */
export async function probeLlmServer(
  config: ProbeConfig,
  opts: { timeoutMs?: number; support?: EmbeddingSupport } = {},
): Promise<ServerProbe> {
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  const [models, embeddings] = await Promise.all([
    probeModels(config, timeoutMs),
    probeEmbeddings(config, timeoutMs, opts.support ?? embeddingSupport),
  ]);
  return { models, embeddings };
}

/** The banner's words for the models list: appended to the LLM line. */
export function describeModels(p: ModelsProbe): string {
  switch (p.state) {
    case 'ok':
      return p.ids.length
        ? `, serves ${p.ids.slice(0, 3).join(', ')}${p.ids.length > 3 ? ` and ${p.ids.length - 3} more` : ''}`
        : ', lists no models';
    case 'unreachable':
      return `: not reachable (${p.reason}); runs wait for it`;
    case 'error':
      return `: its models list answered ${p.reason}`;
    case 'not configured':
      return '';
  }
}

/** The banner's words for embeddings: what the endpoint did when asked, and what that means. */
export function describeEmbeddings(p: EmbeddingsProbe, e: Pick<Config['knowledge']['embedding'], 'model' | 'baseUrl'>): string {
  const where = e.baseUrl ?? DEFAULT_EMBEDDINGS_URL;
  switch (p.state) {
    case 'ok':
      return `${e.model} at ${where} (answered, ${p.dims} dimensions)`;
    case 'unsupported': {
      const hint = /--embeddings/.test(p.detail) ? 'start llama-server with --embeddings' : summarize(p.detail, 100);
      return `not available at ${where} (${p.status}: ${hint}; or set EMBEDDING_BASE_URL and EMBEDDING_MODEL) — knowledge search uses full-text only`;
    }
    case 'unreachable':
      return `${e.model} at ${where}: not reachable (${p.reason}); knowledge search and ingestion wait for it`;
    case 'error':
      return `${e.model} at ${where}: answered ${p.reason}`;
    case 'off':
      return 'off (full-text retrieval only)';
  }
}
