// Test doubles of the scholarly and paid search APIs, each answering as the real one does from the
// fixtures in test/fixtures/search/: PubMed's E-utilities (a refused query is a 200 with
// `esearchresult.ERROR`; the rate limit a 429 with Retry-After and NCBI's JSON), Semantic
// Scholar's Graph API (403 for a bad key, 400 for an unknown field, a 429 with or without a body
// and no Retry-After), Exa (401 INVALID_API_KEY, a 429 with only `error`) and Serper (403
// "Unauthorized.", 400 "Not enough credits"). Every request is recorded for the tests to check.
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { listen, readBody, type RunningServer } from './http';
import { ROOT } from './spawn';

export type ApiKind = 'pubmed' | 'semanticscholar' | 'exa' | 'serper';
/** What the next request is answered with instead of results. */
export type Fault = 'rate-limit' | 'rate-limit-without-body' | 'rate-limit-as-200' | 'no-credits';

export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const fixture = (name: string) => readFileSync(path.join(ROOT, 'test', 'fixtures', 'search', name), 'utf8');
const json = (name: string) => JSON.parse(fixture(name)) as Record<string, unknown>;

type Answer = { status: number; body: string; headers?: Record<string, string> };
const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  headers,
});

/** Fields Semantic Scholar's /paper/search knows (a subset of the real list). */
const S2_FIELDS = new Set([
  'title',
  'url',
  'abstract',
  'venue',
  'year',
  'publicationDate',
  'externalIds',
  'authors',
  'citationCount',
  'tldr',
]);

function pubmed(req: SeenRequest, fault: Fault | undefined): Answer {
  // NCBI's rate-limit body has also been seen with a 200.
  if (fault === 'rate-limit-as-200') return answer(200, fixture('ncbi-rate-limit.json'));
  if (fault)
    return answer(429, fixture('ncbi-rate-limit.json'), { 'retry-after': '2', 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' });
  if (req.path === '/entrez/eutils/esearch.fcgi') {
    if (!req.query.term?.trim()) return answer(200, fixture('pubmed-error.json'));
    const body = json('pubmed-esearch.json') as { esearchresult: { idlist: string[]; retmax: string } };
    body.esearchresult.idlist = body.esearchresult.idlist.slice(0, Number(req.query.retmax ?? 20));
    body.esearchresult.retmax = String(body.esearchresult.idlist.length);
    return answer(200, body);
  }
  if (req.path === '/entrez/eutils/esummary.fcgi') {
    const ids = (req.query.id ?? '').split(',').filter(Boolean);
    if (!ids.length) return answer(200, { esummaryresult: ['Empty id list - nothing todo'] });
    const all = (json('pubmed-esummary.json') as { result: Record<string, unknown> }).result;
    const result: Record<string, unknown> = { uids: ids.filter((id) => id in all) };
    for (const id of ids) if (id in all) result[id] = all[id];
    return answer(200, { header: { type: 'esummary', version: '0.3' }, result });
  }
  return answer(404, '<html><body>Not Found</body></html>');
}

function semanticScholar(req: SeenRequest, fault: Fault | undefined, key: string): Answer {
  if (req.path !== '/graph/v1/paper/search') return answer(404, { message: 'Not Found' });
  const sent = req.headers['x-api-key'];
  if (sent !== undefined && sent !== key) return answer(403, { message: 'Forbidden' });
  if (fault === 'rate-limit-without-body') return answer(429, '');
  if (fault) return answer(429, fixture('semanticscholar-429.json'));
  const unknown = (req.query.fields ?? '').split(',').filter((f) => f && !S2_FIELDS.has(f));
  if (unknown.length) return answer(400, { error: `Unrecognized or unsupported fields: [${unknown.join(', ')}]` });
  const body = json('semanticscholar.json') as { data: unknown[] };
  body.data = body.data.slice(0, Number(req.query.limit ?? 100));
  return answer(200, body);
}

function exa(req: SeenRequest, fault: Fault | undefined, key: string): Answer {
  if (req.method !== 'POST' || req.path !== '/search') return answer(404, { error: 'Not found' });
  if (req.headers['x-api-key'] !== key) return answer(401, fixture('exa-401.json'));
  if (fault === 'no-credits') return answer(402, { requestId: 'b2c3', error: 'You are out of credits', tag: 'NO_MORE_CREDITS' });
  if (fault) return answer(429, fixture('exa-429.json'));
  let query: unknown;
  try {
    query = (JSON.parse(req.body) as { query?: unknown }).query;
  } catch {
    query = undefined;
  }
  if (typeof query !== 'string')
    return answer(400, { requestId: 'a1b2', error: 'Invalid request body: query is required', tag: 'INVALID_REQUEST_BODY' });
  return answer(200, fixture('exa.json'));
}

function serper(req: SeenRequest, fault: Fault | undefined, key: string): Answer {
  if (req.method !== 'POST' || req.path !== '/search') return answer(404, { message: 'Not Found', statusCode: 404 });
  if (req.headers['x-api-key'] !== key) return answer(403, fixture('serper-403.json'));
  if (fault === 'no-credits') return answer(400, fixture('serper-400.json'));
  if (fault) return answer(429, { message: 'Too many requests', statusCode: 429 });
  return answer(200, fixture('serper.json'));
}

export class FakeProviderApi {
  readonly requests: SeenRequest[] = [];
  private readonly faults: Fault[] = [];
  private server: RunningServer | undefined;

  constructor(
    readonly kind: ApiKind,
    /** The key the API accepts (PubMed and Semantic Scholar also answer keyless requests). */
    readonly key = `${kind}-test-key`,
  ) {}

  get url(): string {
    if (!this.server) throw new Error(`fake ${this.kind} not started`);
    return this.server.url;
  }

  get last(): SeenRequest {
    return this.requests.at(-1)!;
  }

  /** The next request gets this answer instead of results. */
  failNext(fault: Fault): this {
    this.faults.push(fault);
    return this;
  }

  async start(): Promise<this> {
    this.server = await listen(async (req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        headers: req.headers,
        body: await readBody(req),
      };
      this.requests.push(seen);
      const fault = this.faults.shift();
      const a =
        this.kind === 'pubmed'
          ? pubmed(seen, fault)
          : this.kind === 'semanticscholar'
            ? semanticScholar(seen, fault, this.key)
            : this.kind === 'exa'
              ? exa(seen, fault, this.key)
              : serper(seen, fault, this.key);
      res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(a.body), ...a.headers });
      res.end(a.body);
    });
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
