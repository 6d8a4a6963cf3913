// A search server answering in SearXNG's JSON shape (`GET /search?q=...&format=json`).
import { listen, sendJson, type RunningServer } from './http';

export interface SearxResult {
  url: string;
  title: string;
  content: string;
  engine?: string;
  score?: number;
  category?: string;
  publishedDate?: string | null;
}

export class FakeSearxng {
  private server: RunningServer | undefined;
  readonly queries: string[] = [];
  /** Results per exact query; `fallback` answers any other query. */
  constructor(
    private readonly byQuery: Record<string, SearxResult[]> = {},
    private fallback: (q: string) => SearxResult[] = () => [],
  ) {}

  /** Answers every query not in `byQuery` with `fn` from now on (the web changed). */
  setFallback(fn: (q: string) => SearxResult[]): this {
    this.fallback = fn;
    return this;
  }

  get url(): string {
    if (!this.server) throw new Error('FakeSearxng not started');
    return this.server.url;
  }

  async start(): Promise<this> {
    this.server = await listen((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname !== '/search') return sendJson(res, 404, { error: 'not found' });
      if (u.searchParams.get('format') !== 'json') return sendJson(res, 403, { error: 'format not allowed' });
      const q = u.searchParams.get('q') ?? '';
      this.queries.push(q);
      const results = (this.byQuery[q] ?? this.fallback(q)).map((r, i) => ({
        engine: 'fixture',
        engines: [r.engine ?? 'fixture'],
        category: 'general',
        score: r.score ?? 1 / (i + 1),
        positions: [i + 1],
        publishedDate: null,
        ...r,
      }));
      sendJson(res, 200, {
        query: q,
        number_of_results: results.length,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      });
    });
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
