// A small web site served from test/fixtures/site, plus routes a test adds for special cases
// (redirects, slow or oversized bodies, odd content types).
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listen, type RunningServer } from './http';

export const SITE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'site');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.json': 'application/json',
  '.csv': 'text/csv; charset=utf-8',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
};

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export class FixtureSite {
  private server: RunningServer | undefined;
  private readonly routes = new Map<string, RouteHandler>();
  readonly hits: string[] = [];

  constructor(private readonly dir = SITE_DIR) {}

  get url(): string {
    if (!this.server) throw new Error('FixtureSite not started');
    return this.server.url;
  }

  route(pathname: string, handler: RouteHandler): this {
    this.routes.set(pathname, handler);
    return this;
  }

  async start(): Promise<this> {
    this.server = await listen((req, res) => void this.handle(req, res));
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', 'http://x');
    this.hits.push(u.pathname);
    const custom = this.routes.get(u.pathname);
    if (custom) return custom(req, res);
    let decoded: string;
    try {
      decoded = decodeURIComponent(u.pathname);
    } catch {
      res.writeHead(400).end(); // a malformed % escape, as a real server answers it
      return;
    }
    const rel = path.normalize(decoded).replace(/^(\.\.[/\\])+/, '');
    const file = path.join(this.dir, rel.endsWith('/') ? `${rel}index.html` : rel);
    if (!file.startsWith(this.dir)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  }
}
