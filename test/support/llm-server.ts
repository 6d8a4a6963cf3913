// An OpenAI-compatible chat-completions server that answers from a per-test script. It is a real
// HTTP server, so the product's own client, timeouts and error mapping are what get tested.
// It also answers /embeddings with the deterministic vectors of ./embeddings (no script needed).
import { appendFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { EMBEDDING_DIMENSIONS, embedText } from './embeddings';
import { listen, readBody, sendJson, type RunningServer } from './http';

export interface ChatRequest {
  model: string;
  messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  [k: string]: unknown;
}

export interface ToolCallSpec {
  name: string;
  /** An object is serialised; a string is sent as-is (to test malformed JSON). */
  arguments: unknown;
  id?: string;
}

export type Reply = (
  | { json: unknown; finishReason?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { content: string; finishReason?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { toolCalls: ToolCallSpec[]; content?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { status: number; error?: { message: string; type?: string; code?: string }; headers?: Record<string, string>; delayMs?: number }
  | { malformedBody: true; delayMs?: number }
  | { hang: true }
) & {
  /** The answer waits (after delayMs) until this settles: a call kept in flight until the test has
   *  done what must happen meanwhile, however long that takes on a loaded machine. */
  until?: Promise<unknown>;
  /** A streamed answer (`stream: true`): the pause before each chunk after the first, and where
   *  it stops (before chunk `cutAfter`, the connection cut as a dying server cuts it). */
  chunkDelayMs?: number;
  cutAfter?: number;
  /** Awaited before chunk `n` is sent: a test holds the answer mid-stream until it has seen what it needs. */
  beforeChunk?: (n: number) => Promise<unknown> | undefined;
};

interface UsageSpec {
  prompt: number;
  completion: number;
}

export interface Rule {
  name?: string;
  match?: (req: ChatRequest) => boolean;
  /** A fixed reply, or one computed from the request and how often this rule has answered (0-based). */
  reply: Reply | ((req: ChatRequest, n: number) => Reply);
  /** Answer at most this many times, then let later rules match. */
  times?: number;
}

export interface LoggedRequest {
  seq: number;
  rule: string | undefined;
  body: ChatRequest;
  /** Authorization header with the key masked: tests can see a key was sent, never the key. */
  authorization: string | undefined;
  startedAt: number;
  endedAt?: number;
  status?: number;
  /** Set when the client went away before the answer (timeout, cancellation, killed worker). */
  aborted?: boolean;
  /** The token usage a completion answered with (the reply's own, else estimated from its length). */
  usage?: UsageSpec;
  /** For a streamed answer, when each chunk was sent. */
  chunkTimes?: number[];
}

export interface EmbeddingRequest {
  model: string;
  input: string | string[];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  [k: string]: unknown;
}

export interface LoggedEmbeddingRequest {
  seq: number;
  model: string | undefined;
  /** How many texts the request asked for (0 when the input was not valid). */
  inputs: number;
  texts: string[];
  encodingFormat: string | undefined;
  dimensions: number | undefined;
  authorization: string | undefined;
  startedAt: number;
  endedAt?: number;
  status?: number;
  aborted?: boolean;
}

interface InjectedFailure {
  status: number;
  error: { message: string; type?: string; code?: string };
  headers: Record<string, string>;
}

export const bySchema = (name: string) => (req: ChatRequest) => req.response_format?.json_schema?.name === name;
export const hasTools = (req: ChatRequest) => (req.tools?.length ?? 0) > 0;
export const systemIncludes = (text: string) => (req: ChatRequest) =>
  req.messages.some((m) => m.role === 'system' && typeof m.content === 'string' && m.content.includes(text));

/** LLM_REQUEST_DUMP=<dir>: each request a test file's scripted model answered, one JSON line in
 *  <dir>/<test file>.jsonl, to compare the requests two versions of the code send
 *  (scripts/compare-model-requests.mjs). */
const DUMP_DIR = process.env.LLM_REQUEST_DUMP;
function dumpRequest(entry: LoggedRequest): void {
  if (!DUMP_DIR) return;
  const file = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath ?? 'unknown';
  const line = { rule: entry.rule ?? null, status: entry.status ?? null, aborted: Boolean(entry.aborted), body: entry.body };
  appendFileSync(path.join(DUMP_DIR, `${path.basename(file)}.jsonl`), `${JSON.stringify(line)}\n`);
}

export class ScriptedLlmServer {
  private rules: (Rule & { used: number })[] = [];
  private server: RunningServer | undefined;
  readonly requests: LoggedRequest[] = [];
  /** Added before every answer, on top of a reply's own delayMs. */
  latencyMs = 0;
  /** A streamed answer's text per chunk, in characters (OpenAI sends about a token a chunk). */
  chunkChars = 16;
  /** Between a streamed answer's chunks, unless the reply sets its own. */
  chunkDelayMs = 0;
  /** Like a provider's rate limit: above this many requests in any second, 429 with Retry-After. */
  requestsPerSecond: number | undefined;
  /** Requests answered 429 by that limit. */
  rateLimited = 0;
  private recent: number[] = [];
  /** Every /embeddings request, in arrival order (not cleared by script(); see resetEmbeddings()). */
  readonly embeddingRequests: LoggedEmbeddingRequest[] = [];
  /** Added before every /embeddings answer, failures included: holds embedding latency fixed. */
  embeddingDelayMs = 0;
  private embeddingFailures: InjectedFailure[] = [];

  get url(): string {
    if (!this.server) throw new Error('ScriptedLlmServer not started');
    return `${this.server.url}/v1`;
  }

  async start(): Promise<this> {
    this.server = await listen((req, res) => void this.handle(req, res));
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }

  /** An outage: the port refuses connections until up(); requests in flight are cut. */
  async down(): Promise<void> {
    await this.server?.close();
  }

  /** Back on the same port after down(). */
  async up(): Promise<void> {
    if (!this.server) throw new Error('ScriptedLlmServer was never started');
    this.server = await listen((req, res) => void this.handle(req, res), this.server.port);
  }

  /** Replaces the script and clears the request log. Rules are tried in order; the first that
   *  matches and is not used up answers. */
  script(rules: Rule[]): this {
    this.rules = rules.map((r) => ({ ...r, used: 0 }));
    this.requests.length = 0;
    return this;
  }

  add(rule: Rule): this {
    this.rules.push({ ...rule, used: 0 });
    return this;
  }

  /** The next `times` /embeddings requests fail with `status` (an OpenAI-shaped error body), then
   *  embeddings answer again. Calls queue up: failEmbeddings(2, 503) then failEmbeddings(1, 429). */
  failEmbeddings(times: number, status = 503, opts: { error?: InjectedFailure['error']; headers?: Record<string, string> } = {}): this {
    const failure: InjectedFailure = { status, error: opts.error ?? defaultError(status), headers: opts.headers ?? {} };
    for (let i = 0; i < times; i++) this.embeddingFailures.push(failure);
    return this;
  }

  /** Clears the embedding log, pending injected failures and the embedding delay. */
  resetEmbeddings(): this {
    this.embeddingRequests.length = 0;
    this.embeddingFailures = [];
    this.embeddingDelayMs = 0;
    return this;
  }

  /** Requests that got a complete 2xx answer. */
  completed(): LoggedRequest[] {
    return this.requests.filter((r) => r.status !== undefined && r.status < 300 && !r.aborted);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      sendJson(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] });
      return;
    }
    if (req.method === 'POST' && req.url?.split('?')[0]?.endsWith('/embeddings')) {
      await this.handleEmbeddings(req, res);
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
      return;
    }
    let body: ChatRequest;
    try {
      body = JSON.parse(await readBody(req)) as ChatRequest;
    } catch {
      sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    const auth = req.headers.authorization;
    const entry: LoggedRequest = {
      seq: this.requests.length,
      rule: undefined,
      body,
      authorization: auth ? auth.replace(/^(Bearer\s+).+$/, '$1***') : undefined,
      startedAt: Date.now(),
    };
    this.requests.push(entry);
    res.on('close', () => {
      if (!res.writableFinished) entry.aborted = true;
      entry.endedAt ??= Date.now();
      dumpRequest(entry);
    });
    if (!body.model || !Array.isArray(body.messages) || body.messages.length === 0) {
      entry.status = 400;
      sendJson(res, 400, { error: { message: 'model and messages are required', type: 'invalid_request_error' } });
      return;
    }
    if (this.requestsPerSecond !== undefined) {
      const now = Date.now();
      this.recent = this.recent.filter((t) => now - t < 1_000);
      if (this.recent.length >= this.requestsPerSecond) {
        this.rateLimited++;
        entry.status = 429;
        sendJson(
          res,
          429,
          { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
          { 'retry-after': '1' },
        );
        return;
      }
      this.recent.push(now);
    }
    const rule = this.rules.find((r) => (r.times === undefined || r.used < r.times) && (r.match?.(body) ?? true));
    if (!rule) {
      entry.status = 500;
      sendJson(res, 500, {
        error: {
          message: `scripted LLM has no rule for this request (schema ${body.response_format?.json_schema?.name ?? 'none'})`,
          type: 'server_error',
        },
      });
      return;
    }
    entry.rule = rule.name;
    const n = rule.used++;
    const reply = typeof rule.reply === 'function' ? rule.reply(body, n) : rule.reply;
    if ('hang' in reply) return; // never answer; the client's timeout or abort ends it
    const delay = this.latencyMs + (reply.delayMs ?? 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (reply.until) await reply.until.catch(() => undefined);
    if (res.destroyed) return;
    entry.endedAt = Date.now();
    if ('status' in reply) {
      entry.status = reply.status;
      sendJson(
        res,
        reply.status,
        { error: { type: 'scripted_error', ...(reply.error ?? { message: `scripted ${reply.status}` }) } },
        reply.headers,
      );
      return;
    }
    if ('malformedBody' in reply) {
      entry.status = 200;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [');
      return;
    }
    entry.status = 200;
    const completion = completionBody(body, reply, entry.seq);
    entry.usage = { prompt: completion.usage.prompt_tokens, completion: completion.usage.completion_tokens };
    if (body.stream === true) await this.stream(res, body, completion, reply, entry);
    else sendJson(res, 200, completion);
  }

  // As OpenAI streams a completion: server-sent events, each a chat.completion.chunk (the role
  // first, then the content or the tool calls' arguments a piece at a time, then the finish
  // reason), the usage in a last chunk with no choices when stream_options.include_usage asks
  // for it, then [DONE].
  private async stream(
    res: http.ServerResponse,
    body: ChatRequest,
    completion: ReturnType<typeof completionBody>,
    reply: Reply,
    entry: LoggedRequest,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const head = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
    const choice = completion.choices[0]!;
    const message = choice.message as {
      content: string | null;
      tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    };
    const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
    const pieces = (text: string) => text.match(new RegExp(`[\\s\\S]{1,${this.chunkChars}}`, 'g')) ?? [];
    for (const piece of pieces(message.content ?? '')) deltas.push({ content: piece });
    (message.tool_calls ?? []).forEach((t, index) => {
      deltas.push({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } }] });
      for (const piece of pieces(t.function.arguments)) deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    const chunks = [
      ...deltas.map((delta) => ({ ...head, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] })),
      { ...head, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason, logprobs: null }] },
    ];
    const options = body.stream_options as { include_usage?: boolean } | undefined;
    if (options?.include_usage) chunks.push({ ...head, choices: [], usage: completion.usage } as (typeof chunks)[number]);
    const delay = reply.chunkDelayMs ?? this.chunkDelayMs;
    entry.chunkTimes = [];
    for (const [n, chunk] of chunks.entries()) {
      if (reply.cutAfter !== undefined && n >= reply.cutAfter) {
        res.destroy();
        return;
      }
      if (n > 0 && delay > 0) await new Promise((r) => setTimeout(r, delay));
      await reply.beforeChunk?.(n);
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      entry.chunkTimes.push(Date.now());
    }
    res.end('data: [DONE]\n\n');
  }

  // Answers like OpenAI's POST /v1/embeddings, including its validation messages. The official
  // client asks for base64 unless the caller chose a format, and decodes float32 little-endian.
  private async handleEmbeddings(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body: Partial<EmbeddingRequest>;
    try {
      body = JSON.parse(await readBody(req)) as Partial<EmbeddingRequest>;
    } catch {
      sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const texts = validTexts(body.input);
    const auth = req.headers.authorization;
    const entry: LoggedEmbeddingRequest = {
      seq: this.embeddingRequests.length,
      model: typeof body.model === 'string' ? body.model : undefined,
      inputs: texts?.length ?? 0,
      texts: texts ?? [],
      encodingFormat: body.encoding_format,
      dimensions: body.dimensions,
      authorization: auth ? auth.replace(/^(Bearer\s+).+$/, '$1***') : undefined,
      startedAt: Date.now(),
    };
    this.embeddingRequests.push(entry);
    res.on('close', () => {
      if (!res.writableFinished) entry.aborted = true;
      entry.endedAt ??= Date.now();
    });
    const answer = (status: number, payload: unknown, headers?: Record<string, string>) => {
      entry.status = status;
      entry.endedAt = Date.now();
      sendJson(res, status, payload, headers);
    };
    const invalid = (message: string, param: string | null = null) =>
      answer(400, { error: { message, type: 'invalid_request_error', param, code: null } });

    if (this.embeddingDelayMs > 0) await new Promise((r) => setTimeout(r, this.embeddingDelayMs));
    if (res.destroyed) return;
    const failure = this.embeddingFailures.shift();
    if (failure) return answer(failure.status, { error: { param: null, code: null, ...failure.error } }, failure.headers);
    if (!entry.model) return invalid('you must provide a model parameter');
    if (!texts) return invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.");
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') {
      return invalid(`Invalid value for 'encoding_format': expected 'float' or 'base64', got '${String(format)}'.`, 'encoding_format');
    }
    const dims = body.dimensions ?? EMBEDDING_DIMENSIONS;
    if (!Number.isInteger(dims) || dims < 1 || dims > 3072) {
      return invalid(`Invalid value for 'dimensions': expected an integer between 1 and 3072.`, 'dimensions');
    }
    const promptTokens = texts.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
    answer(200, {
      object: 'list',
      data: texts.map((text, index) => {
        const vector = embedText(text, dims).map(Math.fround);
        return { object: 'embedding', index, embedding: format === 'base64' ? float32Base64(vector) : vector };
      }),
      model: entry.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  }
}

/** OpenAI rejects an empty string, an empty list and a blank item; token arrays are not embedded here. */
function validTexts(input: unknown): string[] | undefined {
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > 2048) return undefined;
  return texts.every((t) => typeof t === 'string' && t.trim() !== '') ? (texts as string[]) : undefined;
}

function float32Base64(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString('base64');
}

function defaultError(status: number): InjectedFailure['error'] {
  if (status === 429) return { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { message: 'The server had an error while processing your request.', type: 'server_error' };
  return { message: `injected ${status}`, type: 'scripted_error' };
}

function completionBody(req: ChatRequest, reply: Extract<Reply, { usage?: unknown }>, seq: number) {
  let message: Record<string, unknown>;
  let finish = 'stop';
  if ('toolCalls' in reply) {
    message = {
      role: 'assistant',
      content: reply.content ?? null,
      tool_calls: reply.toolCalls.map((t, i) => ({
        id: t.id ?? `call_${seq}_${i}`,
        type: 'function',
        function: { name: t.name, arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments) },
      })),
    };
    finish = 'tool_calls';
  } else {
    const content = 'json' in reply ? JSON.stringify(reply.json) : reply.content;
    message = { role: 'assistant', content, refusal: null };
    finish = reply.finishReason ?? 'stop';
  }
  const promptChars = JSON.stringify(req.messages).length;
  const usage = {
    prompt_tokens: reply.usage?.prompt ?? Math.ceil(promptChars / 4),
    completion_tokens: reply.usage?.completion ?? Math.ceil(JSON.stringify(message).length / 4),
  };
  return {
    id: `chatcmpl-scripted-${seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}
