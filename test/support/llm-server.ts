// An OpenAI-compatible chat-completions server that answers from a per-test script. It is a real
// HTTP server, so the product's own client, timeouts and error mapping are what get tested.
import type http from 'node:http';
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

export type Reply =
  | { json: unknown; finishReason?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { content: string; finishReason?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { toolCalls: ToolCallSpec[]; content?: string; usage?: Partial<UsageSpec>; delayMs?: number }
  | { status: number; error?: { message: string; type?: string; code?: string }; headers?: Record<string, string>; delayMs?: number }
  | { malformedBody: true; delayMs?: number }
  | { hang: true };

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
}

export const bySchema = (name: string) => (req: ChatRequest) => req.response_format?.json_schema?.name === name;
export const hasTools = (req: ChatRequest) => (req.tools?.length ?? 0) > 0;
export const systemIncludes = (text: string) => (req: ChatRequest) =>
  req.messages.some((m) => m.role === 'system' && typeof m.content === 'string' && m.content.includes(text));

export class ScriptedLlmServer {
  private rules: (Rule & { used: number })[] = [];
  private server: RunningServer | undefined;
  readonly requests: LoggedRequest[] = [];
  /** Added before every answer, on top of a reply's own delayMs. */
  latencyMs = 0;
  /** Like a provider's rate limit: above this many requests in any second, 429 with Retry-After. */
  requestsPerSecond: number | undefined;
  /** Requests answered 429 by that limit. */
  rateLimited = 0;
  private recent: number[] = [];

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

  /** Requests that got a complete 2xx answer. */
  completed(): LoggedRequest[] {
    return this.requests.filter((r) => r.status !== undefined && r.status < 300 && !r.aborted);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      sendJson(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] });
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
    sendJson(res, 200, completionBody(body, reply, entry.seq));
  }
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
