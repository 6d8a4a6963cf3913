// The model endpoint and how each role uses it: models, timeouts, output limits, context budgets,
// prices, concurrency, and the fallback provider (src/activities/llm/providers.ts).
import { z } from 'zod';
import { LLM_ROLES, type LlmRole } from '../shared/constants';
import { Duration } from '../shared/schemas';
import { durationToMs } from '../shared/plain';
import { BUILT_IN_PRICES } from './prices';
import { area, hostList, int, optionalString, optionalUrl, roleSettings, type Settings } from './setting-kit';

/** Output limits by role: room for the longest answer each role should write (a plan, a turn of
 *  tool calls, a program, a verdict, a report), so no request runs on until the timeout. */
export const DEFAULT_MAX_TOKENS: Record<LlmRole, number> = {
  coordinator: 512,
  planner: 2_048,
  researcher: 2_048,
  coder: 3_072,
  judge: 768,
  reporter: 4_096,
};

/** USD per million tokens, "model=input/output" pairs separated by commas. */
const priceTable = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const table: Record<string, { input: number; output: number }> = {};
    for (const entry of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const m = /^([^=]+)=([\d.]+)\/([\d.]+)$/.exec(entry);
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not model=input/output (USD per million tokens)` });
        return z.NEVER;
      }
      table[m[1]!.trim()] = { input: Number(m[2]), output: Number(m[3]) };
    }
    return table;
  });

const upper = (role: LlmRole) => role.toUpperCase() as Uppercase<LlmRole>;
const byRole = <T>(of: (role: LlmRole) => T) => Object.fromEntries(LLM_ROLES.map((role) => [role, of(role)])) as Record<LlmRole, T>;

type LlmSettings = Settings<typeof llmSettings>;

/** The second provider, when LLM_FALLBACK_BASE_URL or LLM_FALLBACK_API_KEY is set. */
function fallbackProvider(v: LlmSettings, models: Record<LlmRole, string>) {
  if (!(v.LLM_FALLBACK_BASE_URL || v.LLM_FALLBACK_API_KEY)) return undefined;
  return {
    apiKey: v.LLM_FALLBACK_API_KEY,
    baseUrl: v.LLM_FALLBACK_BASE_URL,
    /** LLM_FALLBACK_MODEL_<ROLE>, else LLM_FALLBACK_MODEL, else the primary's model for the role. */
    models: byRole((role) => v[`LLM_FALLBACK_MODEL_${upper(role)}`] ?? v.LLM_FALLBACK_MODEL ?? models[role]),
    /** LLM_FALLBACK_AFTER in milliseconds. */
    afterMs: durationToMs(v.LLM_FALLBACK_AFTER),
  };
}

const llmSettings = {
  OPENAI_API_KEY: optionalString.describe('key for the LLM endpoint'),
  OPENAI_BASE_URL: optionalUrl.describe('any OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, DashScope, …); unset: OpenAI'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('model for every role without its own'),
  LLM_MODEL_COORDINATOR: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_PLANNER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_RESEARCHER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_CODER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_JUDGE: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_REPORTER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_TIMEOUT_MS: int(1_000, 3_600_000).default(120_000).describe("one LLM HTTP request (below the activity's 5-minute timeout)"),
  ...roleSettings(
    'LLM_TIMEOUT_MS',
    int(1_000, 3_600_000),
    'one request of that role; a request that runs out while the server still answers is *too slow*: asked once more with half the output limit, then the role falls back (an unreachable server is an outage and is waited out); unset: `LLM_TIMEOUT_MS`',
  ),
  ...roleSettings(
    'LLM_MAX_TOKENS',
    int(16, 1_000_000),
    `output limit sent with every request of that role (\`max_tokens\`, \`max_completion_tokens\` for OpenAI), lowered to what the context window leaves; unset: ${LLM_ROLES.map((role) => `${role} ${DEFAULT_MAX_TOKENS[role]}`).join(', ')}`,
  ),
  /** The model's context window in tokens; learned from the server (llama.cpp's /props, vLLM's
   *  max_model_len) when not set. */
  LLM_CONTEXT_TOKENS: int(512, 10_000_000)
    .optional()
    .describe(
      "the model's context window; unset, read from the server (llama.cpp's `/props`, vLLM's `max_model_len`) or learned from its first overflow error. Prompts are counted in tokens (estimated) and trimmed in the middle of their longest part to leave the output room",
    ),
  RESEARCHER_CONTEXT_TOKENS: int(1_000, 1_000_000)
    .optional()
    .describe(
      "tokens of conversation a researcher step sends (in the model's tokenizer family) before its oldest tool results are trimmed and, when that is not enough, it must answer; unset: 50000, or `LLM_CONTEXT_CHARS`/4 when that is set",
    ),
  LLM_CONTEXT_CHARS: int(4_000, 4_000_000).optional().describe('deprecated: `RESEARCHER_CONTEXT_TOKENS` in characters (divided by 4)'),
  RESEARCHER_TOOL_RESULT_TOKENS: int(200, 100_000)
    .default(2_500)
    .describe(
      'tokens one tool result may hold, shared fairly among its pages and search hits (each shortened to its share, the lowest-ranked hits left out when even a share is too small to use; only what is shown counts as read)',
    ),
  LLM_TOKENIZER: z
    .enum(['auto', 'o200k', 'cl100k'], { message: 'expected auto, o200k or cl100k' })
    .default('auto')
    .describe(
      "the tokenizer family budgets are counted in: `auto` takes `o200k` for OpenAI's gpt-4o, gpt-4.1, gpt-5, o-series and gpt-oss models and `cl100k` for the rest (gpt-4, Qwen and Llama 3 descend from it)",
    ),
  LLM_PRICES: priceTable.describe(
    '`model=input/output` USD per million tokens, comma-separated, for cost estimates; over a built-in table of common OpenAI, Google and Anthropic models (src/config/prices.ts). A model priced in neither has its tokens counted as unpriced and its cost shown as unknown',
  ),
  LLM_REQUEST_MODELS: hostList.describe(
    "comma-separated models a request may name (a run's `options.models`, a rewrite's `model`) besides the roles' and the fallback's own and those the provider's models list serves",
  ),
  LLM_REWRITE_MODELS: hostList.describe('deprecated: `LLM_REQUEST_MODELS`'),
  LLM_QUEUE_RATE: z.coerce
    .number()
    .positive()
    .max(10_000)
    .default(10)
    .describe(
      "LLM activities (page extraction included) per second across all workers (the `<queue>-llm` task queue's limit, so many runs on one key slow down together instead of collecting 429s)",
    ),
  LLM_CONCURRENCY: int(1, 512).default(16).describe('LLM activities at once per worker'),
  /** Model requests in flight per provider in one worker (the adaptive limit's ceiling); LLM_CONCURRENCY when unset. */
  LLM_PROVIDER_CONCURRENCY: int(1, 512)
    .optional()
    .describe("where each worker's adaptive limit of requests in flight per provider starts, and its ceiling; unset: `LLM_CONCURRENCY`"),
  /** A second OpenAI-compatible provider, used while the first is down (src/activities/llm/providers.ts). */
  LLM_FALLBACK_BASE_URL: optionalUrl.describe(
    'a second OpenAI-compatible provider, used while the primary is down (see [A fallback provider](llm-servers.md#a-fallback-provider-and-adaptive-concurrency))',
  ),
  LLM_FALLBACK_API_KEY: optionalString.describe("the fallback provider's key; this or `LLM_FALLBACK_BASE_URL` turns the fallback on"),
  LLM_FALLBACK_MODEL: optionalString.describe("the fallback's model; unset: the primary's model names"),
  ...roleSettings(
    'LLM_FALLBACK_MODEL',
    z.string().trim().min(1),
    "the fallback's model of that role; unset: `LLM_FALLBACK_MODEL`, else the primary's model of the role",
  ),
  /** How long the primary must have been failing (no success in between) before calls go to the fallback. */
  LLM_FALLBACK_AFTER: Duration.default('2m').describe(
    'how long the primary must have been failing with outage errors, with no success in between, before requests go to the fallback',
  ),
};

export const llmArea = area('LLM', llmSettings, (v) => {
  const models = byRole((role) => v[`LLM_MODEL_${upper(role)}`] ?? v.LLM_MODEL);
  const llm = {
    apiKey: v.OPENAI_API_KEY,
    baseUrl: v.OPENAI_BASE_URL,
    models,
    /** Models a request may name besides the roles' own and the provider's list (LLM_REQUEST_MODELS). */
    requestModels: [...v.LLM_REQUEST_MODELS, ...v.LLM_REWRITE_MODELS],
    /** The default time one model request may take (LLM_TIMEOUT_MS). */
    timeoutMs: v.LLM_TIMEOUT_MS,
    /** Per role (LLM_TIMEOUT_MS_<ROLE>, else LLM_TIMEOUT_MS): a request that takes longer while
     *  the server answers is "too slow" (src/activities/llm/call.ts). */
    timeouts: byRole((role) => v[`LLM_TIMEOUT_MS_${upper(role)}`] ?? v.LLM_TIMEOUT_MS),
    /** Output limit per role (LLM_MAX_TOKENS_<ROLE>): every request carries max_tokens. */
    maxTokens: byRole((role) => v[`LLM_MAX_TOKENS_${upper(role)}`] ?? DEFAULT_MAX_TOKENS[role]),
    /** LLM_CONTEXT_TOKENS, when the operator sets the window instead of letting it be learned. */
    contextTokens: v.LLM_CONTEXT_TOKENS,
    /** USD per million tokens: the built-in table of common models, LLM_PRICES over it (config/prices.ts). */
    prices: { ...BUILT_IN_PRICES, ...v.LLM_PRICES },
    /** Tokens of conversation a researcher may send before it must answer. */
    conversationTokens: v.RESEARCHER_CONTEXT_TOKENS ?? (v.LLM_CONTEXT_CHARS ? Math.floor(v.LLM_CONTEXT_CHARS / 4) : 50_000),
    /** Tokens one researcher tool result may hold, shared among its pages and hits. */
    toolResultTokens: v.RESEARCHER_TOOL_RESULT_TOKENS,
    /** The family tokens are counted in (LLM_TOKENIZER). */
    tokenizer: v.LLM_TOKENIZER,
    /** LLM activities per second across all workers (the LLM task queue's limit). */
    queueRate: v.LLM_QUEUE_RATE,
    /** LLM activities at once in one worker. */
    concurrency: v.LLM_CONCURRENCY,
    /** The ceiling of each provider's adaptive in-flight limit (LLM_PROVIDER_CONCURRENCY, else LLM_CONCURRENCY). */
    providerConcurrency: v.LLM_PROVIDER_CONCURRENCY ?? v.LLM_CONCURRENCY,
    /** The second provider (LLM_FALLBACK_*), when LLM_FALLBACK_BASE_URL or LLM_FALLBACK_API_KEY is set. */
    fallback: fallbackProvider(v, models),
  };
  return { llm };
});
