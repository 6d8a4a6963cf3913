// The load bench's client of the HTTP API: submit, read a run's status, follow it to its end,
// cancel. Built to hold a thousand runs at once without the bench being what breaks:
// - requests (submit, status, cancel) go through a bounded keep-alive pool, so a thousand runs
//   queue in the bench instead of opening a thousand sockets at once; event streams, which hold
//   their connection for a run's whole life, have a pool of their own without a bound;
// - a 429, a 502-504 or a network error is tried again (a submit with the same Idempotency-Key, so
//   a retry never starts a second run), anything else fails the bench with the API's answer;
// - a status is read with the API's own schema: a body without a valid status is an error, never
//   a run that looks unfinished for ever.
import { Agent, request } from 'undici';
import { RunStatus } from '../../src/shared/schemas';

export type Follow = 'events' | 'poll';
export const TERMINAL = new Set<RunStatus>(['completed', 'failed', 'cancelled']);
const RETRIED = new Set([429, 502, 503, 504]);
const ATTEMPTS = 12;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class BenchApi {
  private readonly calls = new Agent({ connections: 64, keepAliveTimeout: 30_000, headersTimeout: 600_000, bodyTimeout: 600_000 });
  private readonly streams = new Agent({ keepAliveTimeout: 1_000, headersTimeout: 600_000, bodyTimeout: 0 });
  /** Requests tried again (by cause), printed so a bench that survived by retrying says so. */
  readonly retries = new Map<string, number>();

  constructor(private readonly base: string) {}

  private async call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      let cause: string;
      let wait = Math.min(10_000, 500 * 2 ** attempt);
      try {
        const r = await request(`${this.base}${path}`, {
          method,
          dispatcher: this.calls,
          headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          body: body === undefined ? null : JSON.stringify(body),
        });
        const text = await r.body.text();
        if (r.statusCode < 300) return JSON.parse(text);
        if (!RETRIED.has(r.statusCode)) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 500)}`);
        cause = String(r.statusCode);
        const after = Number(r.headers['retry-after']);
        if (after > 0) wait = after * 1000;
      } catch (err) {
        if (err instanceof Error && err.message.startsWith(`${method} ${path}:`)) throw err;
        cause = (err as { code?: string }).code ?? 'network';
        if (attempt >= ATTEMPTS) throw new Error(`${method} ${path}: ${String(err)}`);
      }
      if (attempt >= ATTEMPTS) throw new Error(`${method} ${path}: still ${cause} after ${ATTEMPTS} attempts`);
      this.retries.set(cause, (this.retries.get(cause) ?? 0) + 1);
      await sleep(wait);
    }
  }

  async submit(question: string, options: Record<string, unknown>, idempotencyKey: string): Promise<string> {
    const r = (await this.call('POST', '/v1/research', { question, options }, { 'idempotency-key': idempotencyKey })) as { id?: unknown };
    if (typeof r.id !== 'string') throw new Error(`POST /v1/research answered without an id: ${JSON.stringify(r).slice(0, 300)}`);
    return r.id;
  }

  async status(id: string): Promise<RunStatus> {
    const body = (await this.call('GET', `/v1/research/${id}`)) as { status?: unknown };
    const s = RunStatus.safeParse(body.status);
    if (!s.success) throw new Error(`GET /v1/research/${id}: no valid status in ${JSON.stringify(body).slice(0, 300)}`);
    return s.data;
  }

  async cancel(id: string): Promise<void> {
    await this.call('POST', `/v1/research/${id}/cancel`, {});
  }

  /** Reads the run's event stream until the server ends it (after the `done` event); a stream cut
   *  early only means the status is read sooner. */
  async drainEvents(id: string): Promise<void> {
    try {
      const r = await request(`${this.base}/v1/research/${id}/events`, {
        dispatcher: this.streams,
        headers: { accept: 'text/event-stream' },
      });
      if (r.statusCode !== 200)
        this.retries.set(`event stream ${r.statusCode}`, (this.retries.get(`event stream ${r.statusCode}`) ?? 0) + 1);
      for await (const chunk of r.body) void chunk;
    } catch {
      this.retries.set('event stream cut', (this.retries.get('event stream cut') ?? 0) + 1);
    }
  }

  /** Follows a run to its end: on its event stream, or by reading its status every `pollMs`. */
  async finished(id: string, follow: Follow, pollMs: number): Promise<RunStatus> {
    for (;;) {
      if (follow === 'events') await this.drainEvents(id);
      else await sleep(pollMs);
      const s = await this.status(id);
      if (TERMINAL.has(s)) return s;
      if (follow === 'events') await sleep(1000);
    }
  }

  /** Reads the status of every run every `pollMs` until each is one of `wanted`; a run that ends
   *  instead fails the wait. `parallel` status reads at a time. */
  async waitAll(ids: string[], wanted: RunStatus, pollMs: number, parallel = 16): Promise<void> {
    let left = ids;
    for (;;) {
      const statuses = await mapPool(left, parallel, (id) => this.status(id));
      const ended = left.filter((_, k) => TERMINAL.has(statuses[k]!) && statuses[k] !== wanted);
      if (ended.length) throw new Error(`${ended.length} run(s) ended before they were ${wanted}, e.g. ${ended[0]}`);
      left = left.filter((_, k) => statuses[k] !== wanted);
      if (!left.length) return;
      await sleep(pollMs);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.calls.close(), this.streams.destroy()]);
  }
}

/** `fn` over `items`, at most `parallel` at a time, the results in the items' order. */
export async function mapPool<T, R>(items: T[], parallel: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}
