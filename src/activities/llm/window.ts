// What fits in one request: the model's context window (set, learned from the server, or learned
// from its overflow error), prompts counted in tokens (estimated), trimmed to leave the role's
// output limit room, and the output limit lowered where the window is the tighter bound.
import type { Message } from '../store';

/** Characters per token, on the low side (prose is about 4 for current tokenizers; JSON, URLs and
 *  non-Latin text fewer), so an estimate errs towards "does not fit". */
const CHARS_PER_TOKEN = 3.2;
/** Tokens a chat template adds per message (role markers, separators). */
const PER_MESSAGE_TOKENS = 8;
/** Tokens kept free besides prompt and output: template and tool schemas are counted roughly. */
const MARGIN_TOKENS = 64;
/** The smallest output limit worth asking for. */
const MIN_OUTPUT_TOKENS = 128;
/** Characters a trimmed message keeps at least. */
const MIN_MESSAGE_CHARS = 400;
export const TRIM_MARK = '\n\n[… trimmed to fit the model’s context window …]\n\n';

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function contentOf(m: Message): string {
  const c = (m as { content?: unknown }).content;
  if (typeof c === 'string') return c;
  return c == null ? '' : JSON.stringify(c);
}

/** The conversation's tokens, estimated; `scale` corrects the estimate to what this server counted before. */
export function messageTokens(messages: Message[], extra = '', scale = 1): number {
  let chars = extra.length;
  for (const m of messages) {
    chars += contentOf(m).length;
    const calls = (m as { tool_calls?: unknown }).tool_calls;
    if (calls) chars += JSON.stringify(calls).length;
  }
  return Math.ceil((chars / CHARS_PER_TOKEN + PER_MESSAGE_TOKENS * messages.length) * scale);
}

/**
 * The correction of the estimate for one endpoint and model, from a prompt's estimated and counted
 * tokens (the server's usage, or the count in its overflow error): never below 1 (the estimate
 * errs high already), at most 3, and moved halfway each time so one odd prompt does not swing it.
 */
export function nextScale(current: number, estimated: number, counted: number): number {
  if (!(estimated > 0) || !(counted > 0)) return current;
  const seen = Math.min(3, Math.max(1, counted / estimated));
  return current === 1 ? seen : (current + seen) / 2;
}

/** The prompt's size in tokens an overflow error states ("request (9030 tokens) exceeds…", n_prompt_tokens). */
export function promptTokensFromError(message: string): number | undefined {
  const m =
    /request \((\d+) tokens?\)/i.exec(message) ?? /"n_prompt_tokens"\s*:\s*(\d+)/.exec(message) ?? /requested (\d+) tokens/i.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * Cuts the longest message in its middle (a task's head and its closing instructions both matter),
 * again and again, until the conversation is estimated at `budget` tokens or nothing is left to
 * cut. The system message is cut last.
 */
export function trimMessages(messages: Message[], budget: number, extra = '', scale = 1): { messages: Message[]; trimmed: boolean } {
  const out = messages.map((m) => ({ ...m })) as Message[];
  let trimmed = false;
  for (let guard = 0; guard < 64; guard++) {
    const over = messageTokens(out, extra, scale) - budget;
    if (over <= 0) break;
    const candidates = out
      .map((m, i) => ({ i, len: contentOf(m).length, system: m.role === 'system' }))
      .filter((c) => c.len > MIN_MESSAGE_CHARS && typeof (out[c.i] as { content?: unknown }).content === 'string')
      .sort((a, b) => Number(a.system) - Number(b.system) || b.len - a.len);
    const pick = candidates[0];
    if (!pick) break;
    const text = contentOf(out[pick.i]!);
    const cut = Math.min(text.length - MIN_MESSAGE_CHARS, Math.ceil((over / scale) * CHARS_PER_TOKEN * 1.1) + TRIM_MARK.length);
    if (cut <= TRIM_MARK.length) break;
    const keep = text.length - cut;
    const head = Math.ceil(keep * 0.7);
    (out[pick.i] as { content: string }).content = text.slice(0, head) + TRIM_MARK + text.slice(text.length - (keep - head));
    trimmed = true;
  }
  return { messages: out, trimmed };
}

export interface Fitted {
  messages: Message[];
  maxTokens: number;
  trimmed: boolean;
  promptTokens: number;
}

/**
 * The request that fits `window`: the output limit is the role's, unless the window cannot hold
 * it beside the prompt; then the prompt is trimmed so the output keeps a fair share (`shrink` < 1
 * after an overflow the estimate missed: the prompt gets that fraction of its budget).
 */
export function fitRequest(args: {
  messages: Message[];
  /** Text sent besides the messages (tool schemas). */
  extra?: string;
  maxTokens: number;
  window: number | undefined;
  shrink?: number;
  /** The estimate's correction for this server (nextScale). */
  scale?: number;
}): Fitted {
  const { window, extra = '', scale = 1 } = args;
  const prompt = messageTokens(args.messages, extra, scale);
  if (!window) return { messages: args.messages, maxTokens: args.maxTokens, trimmed: false, promptTokens: prompt };
  const shrink = args.shrink ?? 1;
  // The output's share: what the role asks for, at most 40% of the window, at least a little.
  const reserve = Math.max(Math.min(args.maxTokens, Math.floor(window * 0.4)), Math.min(args.maxTokens, MIN_OUTPUT_TOKENS));
  const budget = Math.floor((window - reserve - MARGIN_TOKENS) * shrink);
  const fitted = prompt > budget ? trimMessages(args.messages, budget, extra, scale) : { messages: args.messages, trimmed: false };
  const used = messageTokens(fitted.messages, extra, scale);
  const room = window - used - MARGIN_TOKENS;
  const maxTokens = Math.max(Math.min(args.maxTokens, room), Math.min(args.maxTokens, MIN_OUTPUT_TOKENS));
  return { messages: fitted.messages, maxTokens, trimmed: fitted.trimmed, promptTokens: used };
}

/** The window a server's overflow error states ("… exceeds the available context size (4096 tokens)",
 *  "maximum context length is 8192 tokens", llama.cpp's `n_ctx`), if it states one. */
export function windowFromError(message: string): number | undefined {
  const m =
    /available context size \((\d+) tokens?\)/i.exec(message) ??
    /maximum context length is (\d+)/i.exec(message) ??
    /"n_ctx"\s*:\s*(\d+)/.exec(message) ??
    /context (?:size|window|length)[^\d]{0,20}(\d{3,})/i.exec(message);
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) && n >= 256 ? n : undefined;
}

/** llama.cpp's /props (per-slot n_ctx), vLLM's and LM Studio's model listing: the first that answers. */
export async function probeWindow(
  baseUrl: string,
  model: string,
  fetchJson: (url: string) => Promise<unknown>,
): Promise<number | undefined> {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  try {
    const props = (await fetchJson(`${root}/props`)) as { default_generation_settings?: { n_ctx?: unknown }; n_ctx?: unknown } | undefined;
    const n = Number(props?.default_generation_settings?.n_ctx ?? props?.n_ctx);
    if (Number.isFinite(n) && n > 0) return n;
  } catch {
    // Not llama.cpp: try the model listing.
  }
  try {
    const list = (await fetchJson(`${baseUrl.replace(/\/+$/, '')}/models`)) as {
      data?: {
        id?: string;
        max_model_len?: unknown;
        context_length?: unknown;
        max_context_length?: unknown;
        meta?: { n_ctx_train?: unknown };
      }[];
    };
    const entry = list?.data?.find((d) => d.id === model) ?? (list?.data?.length === 1 ? list.data[0] : undefined);
    const n = Number(entry?.max_model_len ?? entry?.context_length ?? entry?.max_context_length ?? entry?.meta?.n_ctx_train);
    if (Number.isFinite(n) && n > 0) return n;
  } catch {
    // Neither: the window stays unknown, and an overflow error teaches it.
  }
  return undefined;
}

/**
 * The context windows their makers publish for common hosted models, for an API that does not say
 * (OpenAI's model listing has no window): matched on the model id without a router's `vendor/`
 * prefix, most specific first. A model not listed stays unknown until an overflow teaches it.
 */
const PUBLISHED_WINDOWS: readonly [RegExp, number][] = [
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^gpt-4o/, 128_000],
  [/^gpt-4-turbo/, 128_000],
  [/^o1-(mini|preview)/, 128_000],
  [/^o[134](-|$)/, 200_000],
  [/^claude-/, 200_000],
  [/^gemini-(1\.5|2)/, 1_048_576],
];

export function publishedWindow(model: string): number | undefined {
  const id = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  return PUBLISHED_WINDOWS.find(([re]) => re.test(id))?.[1];
}
