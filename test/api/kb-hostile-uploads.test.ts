// Hostile uploads through the API and the ingestion workflow, with the worker in this process
// (as `dev` runs it): a DOCX whose XML inflates far past the cap, zip-bomb entries in a PPTX and
// an XLSX, a PDF whose pages share one stream, a PDF one page over the page cap, a CSV with a
// million columns. Each document ends `failed` with the cap it broke, after one parse attempt;
// meanwhile /healthz answers within a second and the process's memory grows by less than the
// parse thread's cap. A good document after them is still ingested.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestWorkflowId } from '../../src/api/knowledge-service';
import { startHarness, type Harness } from '../support/harness';
import * as hostile from '../support/hostile-files';
import { makeDocx } from '../support/kb-fixtures';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const MEMORY_MB = 256;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

interface Doc {
  id: string;
  status: string;
  error?: string;
  chunks: number;
}

describe.skipIf(!ready)(`hostile uploads (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `kb-hostile-${randomBytes(4).toString('hex')}`;
  const as = (r: request.Test) => r.set('x-tenant-id', tenant);
  let collection: string;

  beforeAll(async () => {
    h = await startHarness({
      env: {
        KB_MAX_FILE_BYTES: '5000000',
        KB_PARSE_MEMORY_MB: String(MEMORY_MB),
        KB_PARSE_MAX_INFLATED_MB: '20',
        KB_PARSE_MAX_PAGES: '50',
        KB_PARSE_TIMEOUT_MS: '60000',
      },
    });
    const res = await as(request(h.app).post('/v1/collections')).send({ name: 'Hostile' }).expect(201);
    collection = res.body.id;
  });
  afterAll(async () => {
    if (collection) await as(request(h.app).delete(`/v1/collections/${collection}`));
    await h?.close();
  });

  async function settled(id: string, timeoutMs = 60_000): Promise<Doc> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await as(request(h.app).get(`/v1/collections/${collection}/documents/${id}`)).expect(200);
      if (['ready', 'failed'].includes(res.body.status)) return res.body as Doc;
      if (Date.now() > until) throw new Error(`document ${id} still ${res.body.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Uploads the file and waits for its document, timing /healthz and sampling RSS meanwhile. */
  async function ingestWatched(name: string, bytes: Buffer, type: string) {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
    const health: number[] = [];
    let watching = true;
    const prober = (async () => {
      while (watching) {
        const started = performance.now();
        await request(h.app).get('/healthz').expect(200);
        health.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      const res = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
        .attach('file', bytes, { filename: name, contentType: type })
        .expect(202);
      const doc = await settled((res.body as Doc).id);
      return { doc, health, rssGrowthMb: (peakRss - rssBefore) / 1024 / 1024 };
    } finally {
      watching = false;
      await prober;
      clearInterval(sampler);
    }
  }

  /** The parse activity's attempts in the document's ingestion history. */
  async function parseAttempts(documentId: string): Promise<number[]> {
    const history = await h.client.workflow.getHandle(ingestWorkflowId(documentId)).fetchHistory();
    const scheduled = new Map<number, string>();
    const attempts: number[] = [];
    for (const e of history.events ?? []) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(Number(e.eventId), s.activityType?.name ?? '');
      const started = e.activityTaskStartedEventAttributes;
      if (started && scheduled.get(Number(started.scheduledEventId)) === 'parseDocument') attempts.push(started.attempt ?? 0);
    }
    return attempts;
  }

  it.each([
    ['bomb.docx', DOCX, () => hostile.makeDocxBomb(300), /^DOCX: word\/document\.xml decompresses to more than 20 MB/],
    ['bomb.pptx', PPTX, () => hostile.makePptxBomb(1_000), /^PPTX: the file's entries declare 1048\.6 MB uncompressed/],
    ['bomb.xlsx', XLSX, () => hostile.makeXlsxBomb(300), /^XLSX: xl\/worksheets\/sheet1\.xml decompresses to more than 20 MB/],
    ['shared.pdf', 'application/pdf', () => hostile.makeSharedStreamPdf(40, 5), /^PDF: the PDF decompresses to more than 20 MB/],
    ['pages.pdf', 'application/pdf', () => hostile.makeManyPagesPdf(51), /^PDF: the file has 51 pages; at most 50 are parsed/],
    ['wide.csv', 'text/csv', () => hostile.makeWideCsv(1_000_000), /^CSV: the file has more than 1,000 columns in a row/],
  ] as const)('fails %s with the cap it broke, the API answering meanwhile', async (name, type, make, reason) => {
    const bytes = await make();
    expect(bytes.length).toBeLessThan(5_000_000);
    const { doc, health, rssGrowthMb } = await ingestWatched(name, bytes, type);
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatch(reason);
    expect(doc.chunks).toBe(0);
    expect(await parseAttempts(doc.id)).toEqual([1]); // refused at once: not retried
    expect(health.length).toBeGreaterThan(0);
    expect(Math.max(...health)).toBeLessThan(1_000);
    expect(rssGrowthMb).toBeLessThan(MEMORY_MB);
  });

  it('still ingests a good document after them', async () => {
    const { doc, health } = await ingestWatched('handbook.docx', await makeDocx(), DOCX);
    expect(doc.error).toBeUndefined();
    expect(doc.status).toBe('ready');
    expect(doc.chunks).toBeGreaterThan(0);
    expect(Math.max(...health)).toBeLessThan(1_000);
  });
});
