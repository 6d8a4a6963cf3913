// Large documents ingesting while another tenant is served, in `dev`'s shape: the API, the worker
// and the embedded database (PGlite, which executes statements on the thread that serves them) in
// this one process (issue 51: three 2.4 MB Markdown files finishing together stalled another
// tenant's request 11.6 s, a 1,900-page PDF /healthz 12.4 s). Three 2.4 MB Markdown files and a
// 1,900-page PDF are uploaded at once; until all four are parsed and chunked, their chunks written
// and the first documents' embeddings being saved, /healthz and another tenant's reads are timed
// one after another, and their p99 must stay under 1 s. On the 2-core host this was written on,
// shared with other test runs (load average 4 to 7), the p99 measured 94 to 280 ms with the fix
// and 3.7 to 6.9 s without it (the same test on the code before): 1 s is 3.5 to 10 times what the
// fix gives under that load, and several times below what the fault gives. The embedding phase
// after the window is more of the same statements; the test stops there (the collection deleted)
// to keep its time down.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger';
import { migrate } from '../../src/infra/migrate';
import { createPool, startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/infra/postgres';
import { startHarness, type Harness } from '../support/harness';
import { makeTextPdf } from '../support/hostile-files';
import { makeLargeMarkdown, proseWriter } from '../support/kb-fixtures';
import { missingReason, temporalAddress } from '../support/services';
import { freePort } from '../support/spawn';

const ready = Boolean(temporalAddress());
const PDF_PAGES = 1_900;
/** Embeddings saved in all when the window ends (of some 14,000 chunks), once every document's
 *  chunks are written: the earlier documents' embeddings are saved while the later ones' chunks are. */
const EMBEDDED = 512;

interface Doc {
  id: string;
  status: string;
  error?: string;
  chunks: number;
  embedded: number;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

describe.skipIf(!ready)(`ingestion beside another tenant, embedded database (${ready ? 'live' : missingReason()})`, () => {
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  let h: Harness;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'kb-stall-'));
    embedded = await startEmbeddedPostgres({ dataDir, port: await freePort(), log: createLogger('warn') });
    const pool = createPool(embedded.url, 1);
    await migrate(pool);
    await pool.end();
    // The PDF's parse and chunking under a loaded CI host: more room than the default 120 s.
    h = await startHarness({ databaseUrl: embedded.url, env: { KB_PARSE_TIMEOUT_MS: '300000' } });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    await embedded?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps /healthz and another tenant under 1 s (p99) while three 2.4 MB Markdown files and a 1,900-page PDF ingest', async () => {
    const prose = proseWriter(7);
    // About 1,000 characters a page: 1.9 million, just within the parser's default character cap.
    const pdf = makeTextPdf(PDF_PAGES, () => Array.from({ length: 12 }, () => prose(11)));
    const markdown = [1, 2, 3].map((seed) => makeLargeMarkdown(2_400_000, seed));
    const a = (r: request.Test) => r.set('x-tenant-id', 'stall-a');
    const b = (r: request.Test) => r.set('x-tenant-id', 'stall-b');
    const shelf = (await a(request(h.app).post('/v1/collections')).send({ name: 'Large' }).expect(201)).body.id as string;
    const other = (await b(request(h.app).post('/v1/collections')).send({ name: 'Other' }).expect(201)).body.id as string;

    const delay = monitorEventLoopDelay({ resolution: 10 });
    const timings: Record<string, number[]> = { healthz: [], collections: [], documents: [] };
    let watching = true;
    const started = performance.now();
    delay.enable();
    const prober = (async () => {
      const probes: [string, () => request.Test][] = [
        ['healthz', () => request(h.app).get('/healthz')],
        ['collections', () => b(request(h.app).get('/v1/collections'))],
        ['documents', () => b(request(h.app).get(`/v1/collections/${other}/documents`))],
      ];
      // Each probe is timed from when it was due, so that a stall that holds up its sending (this
      // client shares the event loop) counts as a client elsewhere would see it.
      let due = performance.now();
      while (watching) {
        for (const [name, probe] of probes) {
          await probe().expect(200);
          const end = performance.now();
          timings[name]!.push(end - due);
          due = end;
        }
        due = performance.now() + 50;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    let docs: Doc[] = [];
    try {
      const uploads = await Promise.all([
        ...markdown.map((bytes, i) =>
          a(request(h.app).post(`/v1/collections/${shelf}/documents`))
            .attach('file', bytes, { filename: `large-${i}.md`, contentType: 'text/markdown' })
            .expect(202),
        ),
        a(request(h.app).post(`/v1/collections/${shelf}/documents`))
          .attach('file', pdf, { filename: 'large.pdf', contentType: 'application/pdf' })
          .expect(202),
      ]);
      const ids = uploads.map((r) => (r.body as Doc).id);
      const deadline = Date.now() + 480_000;
      for (;;) {
        docs = await Promise.all(
          ids.map(async (id) => (await a(request(h.app).get(`/v1/collections/${shelf}/documents/${id}`)).expect(200)).body as Doc),
        );
        const written = docs.every((d) => d.status === 'failed' || d.status === 'ready' || d.status === 'embedding');
        const settled = docs.some((d) => d.status === 'failed') || (written && docs.reduce((n, d) => n + d.embedded, 0) >= EMBEDDED);
        if (settled || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      watching = false;
      await prober.catch(() => undefined);
      delay.disable();
    }
    const all = Object.values(timings).flat();
    console.log(
      `${docs.map((d) => `${d.chunks} chunks (${d.embedded} embedded)`).join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        Object.entries(timings)
          .map(([n, t]) => `${n} p99 ${percentile(t, 0.99).toFixed(0)} max ${Math.max(...t).toFixed(0)} ms (${t.length})`)
          .join(', ') +
        `; event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(0)} max ${(delay.max / 1e6).toFixed(0)} ms`,
    );
    // Stops the ingestions still embedding.
    await a(request(h.app).delete(`/v1/collections/${shelf}`)).expect(200);

    for (const d of docs) {
      expect(d.error).toBeUndefined();
      expect(['embedding', 'ready']).toContain(d.status);
      expect(d.chunks).toBeGreaterThan(2_500);
    }
    expect(docs.reduce((n, d) => n + d.embedded, 0)).toBeGreaterThanOrEqual(EMBEDDED);
    expect(all.length).toBeGreaterThan(30);
    expect(percentile(all, 0.99)).toBeLessThan(1_000);
  }, 600_000);
});
