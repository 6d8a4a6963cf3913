// A recording proxy in front of a real OpenAI-compatible server: every request passes through
// unchanged, and the proxy keeps what a test asserts on and reports (the role, read from the model
// name the test gives each role, the output limit the request carried, tokens, seconds, status).
// It can also stand in for the server's --no-jinja mode (the real refusal, word for word).
import { listen, readBody, type RunningServer } from './http';

export interface ProxiedRequest {
  path: string;
  model: string;
  maxTokens: number | undefined;
  tools: boolean;
  status: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  finishReason: string | undefined;
}

export interface LlmProxy extends RunningServer {
  requests: ProxiedRequest[];
}

/** What llama-server (b11434) answers a request with `tools` when it runs without --jinja, as it sent it. */
export const NO_JINJA_REFUSAL = '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}';

export interface LlmProxyOptions {
  /** Answer requests with `tools` as llama-server without --jinja does (HTTP 500, NO_JINJA_REFUSAL), so
   *  one server started with --jinja serves a client of each kind; every other request passes. */
  withoutJinja?: boolean;
}

/** What llama-server adds to an answer about its own work on it. */
interface Timings {
  prompt_n?: number;
  prompt_ms?: number;
  predicted_ms?: number;
}

export async function startLlmProxy(target: string, opts: LlmProxyOptions = {}): Promise<LlmProxy> {
  const requests: ProxiedRequest[] = [];
  const base = target.replace(/\/+$/, '');
  const server = await listen((req, res) => {
    void (async () => {
      const started = Date.now();
      const body = await readBody(req);
      let parsed: { model?: string; max_tokens?: number; max_completion_tokens?: number; tools?: unknown[] } = {};
      try {
        parsed = body ? JSON.parse(body) : {};
      } catch {
        // Passed through as it came.
      }
      const path = (req.url ?? '/').replace(/^\/v1/, '');
      const record = (
        status: number,
        promptTokens: number,
        completionTokens: number,
        finishReason: string | undefined,
        timings?: Timings,
      ) => {
        if (!path.startsWith('/chat/completions')) return;
        // Each request as it ends, to follow a slow real-model run (and to see, after a timeout, where it was);
        // llama-server's own timings say how much of it was the prompt (tokens not in the slot's cache) and how much writing.
        const server = timings
          ? ` [prompt ${timings.prompt_n ?? '?'} new tokens ${((timings.prompt_ms ?? 0) / 1000).toFixed(1)} s, writing ${((timings.predicted_ms ?? 0) / 1000).toFixed(1)} s]`
          : '';
        console.log(
          `[llm proxy] ${parsed.model ?? ''} ${status} ${((Date.now() - started) / 1000).toFixed(1)} s, ${promptTokens} prompt + ${completionTokens} completion tokens (limit ${parsed.max_tokens ?? parsed.max_completion_tokens ?? 'none'}), ${finishReason ?? ''}${Array.isArray(parsed.tools) && parsed.tools.length ? ', tools' : ''}${server}`,
        );
        requests.push({
          path,
          model: parsed.model ?? '',
          maxTokens: parsed.max_tokens ?? parsed.max_completion_tokens,
          tools: Array.isArray(parsed.tools) && parsed.tools.length > 0,
          status,
          promptTokens,
          completionTokens,
          ms: Date.now() - started,
          finishReason,
        });
      };
      if (opts.withoutJinja && Array.isArray(parsed.tools) && parsed.tools.length > 0) {
        record(500, 0, 0, undefined);
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(NO_JINJA_REFUSAL);
        return;
      }
      const abort = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      try {
        const upstream = await fetch(`${base}${path}`, {
          method: req.method ?? 'GET',
          headers: { 'content-type': 'application/json' },
          ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
          signal: abort.signal,
        });
        const type = upstream.headers.get('content-type') ?? 'application/json';
        let text = '';
        if (/^text\/event-stream/.test(type) && upstream.body) {
          // A streamed answer goes on chunk by chunk as the server writes it.
          res.writeHead(upstream.status, { 'content-type': type });
          const decoder = new TextDecoder();
          const reader = upstream.body.getReader();
          for (let r = await reader.read(); !r.done; r = await reader.read()) {
            res.write(r.value);
            text += decoder.decode(r.value, { stream: true });
          }
        }
        if (!text) text = await upstream.text();
        let usage: { prompt_tokens?: number; completion_tokens?: number } = {};
        let finishReason: string | undefined;
        let timings: Timings | undefined;
        // One JSON answer, or a stream's chunks: the finish reason, usage and timings are in its last ones.
        const answers =
          text.startsWith('data:') || text.includes('\ndata:') ? [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => m[1]!) : [text];
        for (const one of answers) {
          try {
            const j = JSON.parse(one) as { usage?: typeof usage; choices?: { finish_reason?: string | null }[]; timings?: Timings };
            usage = j.usage ?? usage;
            finishReason = j.choices?.[0]?.finish_reason ?? finishReason;
            timings = j.timings ?? timings;
          } catch {
            // Not JSON: an error page.
          }
        }
        record(upstream.status, usage.prompt_tokens ?? 0, usage.completion_tokens ?? 0, finishReason, timings);
        if (res.headersSent) return void res.end();
        res.writeHead(upstream.status, { 'content-type': type });
        res.end(text);
      } catch (err) {
        record(0, 0, 0, `aborted: ${(err as Error).message}`);
        if (!res.headersSent) res.writeHead(502);
        res.end();
      }
    })();
  });
  return { ...server, requests };
}

/** Per role (the model name's suffix after "local-"): requests, tokens, seconds. */
export function perRole(
  requests: ProxiedRequest[],
): Map<string, { requests: number; prompt: number; completion: number; seconds: number; cutOff: number }> {
  const out = new Map<string, { requests: number; prompt: number; completion: number; seconds: number; cutOff: number }>();
  for (const r of requests) {
    const role = r.model.replace(/^local-/, '');
    const row = out.get(role) ?? { requests: 0, prompt: 0, completion: 0, seconds: 0, cutOff: 0 };
    row.requests++;
    row.prompt += r.promptTokens;
    row.completion += r.completionTokens;
    row.seconds += r.ms / 1000;
    if (r.finishReason === 'length') row.cutOff++;
    out.set(role, row);
  }
  return out;
}
