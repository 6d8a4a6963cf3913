// Error type names carried by ApplicationFailure.type. Workflows and the API branch on these
// strings, so they are part of the contract: an open run may hold any of them in its history.
export const ErrorType = {
  /** No LLM endpoint or key is configured: the operator must set OPENAI_API_KEY / OPENAI_BASE_URL. */
  LlmNotConfigured: 'LlmNotConfigured',
  /** The LLM provider rejected our credentials (401/403). */
  LlmAuth: 'LlmAuth',
  /** The request itself is wrong (400/404/422): retrying the same request cannot help. */
  LlmBadRequest: 'LlmBadRequest',
  /** The prompt plus expected output does not fit the model's context window. */
  LlmContextLength: 'LlmContextLength',
  /** The provider's content filter refused the request or the answer. */
  LlmContentFilter: 'LlmContentFilter',
  /** The model's answer did not match the schema even after its repair requests. */
  LlmInvalidOutput: 'LlmInvalidOutput',
  /** The server is reachable but did not answer within the role's timeout, even with a smaller
   *  output limit: "too slow", not "down". Non-retryable: the role falls back. */
  LlmTooSlow: 'LlmTooSlow',
  /** The server lacks a feature the request used (tools without llama.cpp's --jinja, no
   *  /embeddings: a 501, or a 4xx/5xx that names the missing feature). Permanent: the caller
   *  switches to its fallback (JSON actions, full-text retrieval) instead of waiting. */
  LlmUnsupported: 'LlmUnsupported',
  /** A prompt template is missing or was rendered without a variable it needs. */
  PromptError: 'PromptError',
  /** The input an activity received cannot be acted on. */
  InvalidInput: 'InvalidInput',
  /** A run or row that should exist does not. */
  NotFound: 'NotFound',
  /** The provider answered 429: transient, retried after its Retry-After (nextRetryDelay). */
  LlmRateLimited: 'LlmRateLimited',
  /** No search provider is enabled. */
  SearchNotConfigured: 'SearchNotConfigured',
  /** Every provider refused the query with a 4xx (other than 408/429): retrying cannot help. */
  SearchRejected: 'SearchRejected',
  /** Every provider failed the query with an outage (5xx, timeout, 429): retried. The activities
   *  that search among other work (researchBackground, researcherTurn) say they wait for search. */
  SearchUnavailable: 'SearchUnavailable',
  /** A tool call names an MCP server that MCP_CONFIG does not list. */
  McpNotConfigured: 'McpNotConfigured',
  /** The researcher's model called a tool this researcher does not offer. */
  UnknownTool: 'UnknownTool',
  /** The planner gave no valid plan within its attempts. */
  InvalidPlan: 'InvalidPlan',
  /** The research workflow failed; the message says why. */
  ResearchFailed: 'ResearchFailed',
  /** The sandbox image is not on the Docker host. */
  SandboxImageMissing: 'SandboxImageMissing',
  /** A sandbox run stopped because its activity was cancelled (the type name predates this list). */
  SandboxCancelled: 'CancelledFailure',
  /** The worker stopped (a deploy) while the call ran: retried by the next worker. */
  WorkerShutdown: 'WorkerShutdown',
  /** A webhook receiver refused the delivery (4xx other than 408/429), or its URL is not allowed. */
  WebhookRejected: 'WebhookRejected',
  /** No WEBHOOK_SECRET on this worker: deliveries cannot be signed. */
  WebhookNotConfigured: 'WebhookNotConfigured',
  /** A review or clarification update was refused by the workflow's validator; details: Refusal. */
  MessageRefused: 'MessageRefused',
  /** A sandbox program printed more than any valid result can be. */
  SandboxOutputTooLarge: 'SandboxOutputTooLarge',
  /** An uploaded or fetched document whose format is not one the knowledge base reads. */
  DocumentUnsupported: 'DocumentUnsupported',
  /** A document the parser cannot read (corrupt, encrypted, empty); the message has its reason. */
  DocumentUnreadable: 'DocumentUnreadable',
  /** A document past one of the parse caps (decompressed size, pages, rows, columns, memory,
   *  time: KB_PARSE_*); the message names the cap. The same bytes break it again: not retried. */
  DocumentTooLarge: 'DocumentTooLarge',
  /** A document URL that cannot be fetched (blocked by the SSRF guard, 4xx, too large). */
  DocumentFetchFailed: 'DocumentFetchFailed',
} as const;
export type ErrorType = (typeof ErrorType)[keyof typeof ErrorType];

/** Thrown by loadConfig; the message names every bad variable and why. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly issues: { variable: string; reason: string }[],
  ) {
    super(message);
  }
}

/** An error the HTTP layer maps to a status code; body `{ error: { code, message, details? } }`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Seconds a client should wait before asking again (a Retry-After header). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const LLM_NOT_CONFIGURED_MESSAGE =
  'No LLM is configured. Set OPENAI_API_KEY to use api.openai.com, or OPENAI_BASE_URL ' +
  '(plus OPENAI_API_KEY if the server needs one) to use an OpenAI-compatible server such as ' +
  'vLLM, Ollama or DeepSeek; choose models with LLM_MODEL or LLM_MODEL_<ROLE>.';

/** The innermost message of a failure chain (ActivityFailure → ApplicationFailure → …). */
export function failureMessage(err: unknown): string {
  let cur = err as { message?: string; cause?: unknown } | undefined;
  while (cur && cur.cause) cur = cur.cause as typeof cur;
  return cur?.message ?? String(err);
}
