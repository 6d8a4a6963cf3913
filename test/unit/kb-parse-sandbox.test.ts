// Documents parsed on the parse thread under caps: each hostile file (made here, small on disk)
// is refused with the cap it broke, the thread's measured memory stays under its cap, the
// calling thread's event loop keeps turning meanwhile, a parse that runs out of memory or time
// costs its thread (replaced for the next document), and ordinary documents still parse.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARSE_CAPS, DocumentTooLarge, DocumentUnreadable } from '../../src/activities/knowledge/parse-caps';
import { chunkDocument } from '../../src/activities/knowledge/chunk';
import { parseDocument, type DocFormat } from '../../src/activities/knowledge/parse';
import { ParseSandbox } from '../../src/activities/knowledge/parse-thread';
import * as fx from '../support/kb-fixtures';
import * as hostile from '../support/hostile-files';
import { ROOT } from '../support/spawn';

const MEMORY_MB = 256;
const MB = 1024 * 1024;
const caps = { ...DEFAULT_PARSE_CAPS, maxInflatedBytes: 20_000_000, maxPages: 50, maxRows: 1_000, maxColumns: 1_000 };
const sandbox = new ParseSandbox({ threads: 1, memoryMb: MEMORY_MB, timeoutMs: 30_000, caps });
afterAll(() => sandbox.close());

/** The largest gap between 20 ms ticks of this thread's event loop while `work` runs, in ms. */
async function loopStall<T>(work: () => Promise<T>): Promise<{ result: T | Error; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last - 20);
    last = now;
  }, 20);
  try {
    return { result: await work().catch((e: unknown) => e as Error), stallMs };
  } finally {
    clearInterval(tick);
  }
}

async function refused(bytes: Buffer, format: DocFormat, reason: RegExp): Promise<void> {
  const { result, stallMs } = await loopStall(() => sandbox.parse(bytes, format, `hostile.${format}`));
  expect(result).toBeInstanceOf(DocumentTooLarge);
  expect((result as Error).message).toMatch(reason);
  expect(stallMs).toBeLessThan(1_000);
  expect(sandbox.peakBytes).toBeLessThan(MEMORY_MB * MB);
}

describe('parsing in the parse thread, under caps', () => {
  it('parses ordinary documents of every binary format, the thread kept between them', async () => {
    const pdf = await sandbox.parse(await fx.makePdf(), 'pdf', 'sheet.pdf');
    expect(pdf.sections.map((s) => s.page)).toEqual([1, 2]);
    expect(pdf.title).toBe(fx.PDF_FACTS.title);
    const docx = await sandbox.parse(await fx.makeDocx(), 'docx', 'handbook.docx');
    expect(docx.title).toBe('Grid Storage Handbook');
    const pptx = await sandbox.parse(await fx.makePptx(), 'pptx', 'deck.pptx');
    expect(pptx.pages).toBe(pptx.sections.length);
    const xlsx = await sandbox.parse(await fx.makeXlsx(), 'xlsx', 'plants.xlsx');
    expect(xlsx.sections[0]!.text).toContain(fx.XLSX_FACTS.rendered);
    const fifty = await sandbox.parse(hostile.makeManyPagesPdf(50), 'pdf', 'fifty.pdf');
    expect(fifty.sections.at(-1)!.text).toBe('Page 50');
    expect(sandbox.threadsStarted).toBe(1);
  });

  it('refuses a DOCX whose XML inflates far past the cap while its ZIP declares 4 KB', async () => {
    const bomb = await hostile.makeDocxBomb(300);
    expect(bomb.length).toBeLessThan(3_000_000);
    await refused(bomb, 'docx', /^DOCX: word\/document\.xml decompresses to more than 20 MB.*KB_PARSE_MAX_INFLATED_MB/);
  });

  it('refuses zip-bomb entries in a PPTX (declared) and an XLSX (lying about its size)', async () => {
    await refused(await hostile.makePptxBomb(1_000), 'pptx', /^PPTX: the file's entries declare 1048\.6 MB uncompressed/);
    await refused(await hostile.makeXlsxBomb(200), 'xlsx', /^XLSX: xl\/worksheets\/sheet1\.xml decompresses to more than 20 MB/);
  });

  it('refuses a PDF whose pages decode one shared stream past the cap, and one page over the page cap', async () => {
    // 40 pages (under the page cap) share one 5 MB content stream: pdf.js decodes it per page.
    await refused(hostile.makeSharedStreamPdf(40, 5), 'pdf', /^PDF: the PDF decompresses to more than 20 MB/);
    await refused(hostile.makeManyPagesPdf(51), 'pdf', /^PDF: the file has 51 pages; at most 50 are parsed \(KB_PARSE_MAX_PAGES\)/);
  });

  it('refuses a CSV with 1,000,000 columns, and one with too many rows', async () => {
    await refused(hostile.makeWideCsv(1_000_000), 'csv', /^CSV: the file has more than 1,000 columns in a row/);
    await refused(Buffer.from('a,b\n' + '1,2\n'.repeat(1_001)), 'csv', /^CSV: the file has more than 1,000 rows.*KB_PARSE_MAX_ROWS/);
  });

  it('fails a document whose parse outgrows the memory cap, and the next document parses on a new thread', async () => {
    const started = sandbox.threadsStarted;
    const { result, stallMs } = await loopStall(async () => sandbox.parse(await hostile.makeDenseDocx(300_000), 'docx', 'dense.docx'));
    expect(result).toBeInstanceOf(DocumentTooLarge);
    expect((result as Error).message).toMatch(/^DOCX: the parser needed more than 256 MB of memory \(KB_PARSE_MEMORY_MB\)/);
    expect(stallMs).toBeLessThan(1_000);
    const docx = await sandbox.parse(await fx.makeDocx(), 'docx', 'handbook.docx');
    expect(docx.title).toBe('Grid Storage Handbook');
    expect(sandbox.threadsStarted).toBe(started + 1);
  });

  it('ends a parse that takes longer than its time, failing only that document', async () => {
    const slow = new ParseSandbox({
      threads: 1,
      memoryMb: 512,
      // Long enough for the next document's new thread to start on a busy machine (1.4 s seen).
      timeoutMs: 5_000,
      caps: { ...caps, maxInflatedBytes: 5e9, maxPages: 10_000 },
    });
    try {
      const started = performance.now();
      const err = await slow.parse(hostile.makeSharedStreamPdf(2_000, 5), 'pdf', 'slow.pdf').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DocumentTooLarge);
      expect((err as Error).message).toBe('PDF: parsing took longer than 5 s (KB_PARSE_TIMEOUT_MS)');
      // Ended by its time, not by parsing to the end (over two minutes here).
      expect(performance.now() - started).toBeLessThan(60_000);
      const text = await slow.parse(Buffer.from('still here'), 'text', 'after.txt');
      expect(text.sections[0]!.text).toBe('still here');
    } finally {
      await slow.close();
    }
  });

  it("chunks a document on the thread as chunkDocument does here, this thread's event loop turning meanwhile", async () => {
    const bytes = fx.makeLargeMarkdown(300_000, 5);
    const opts = { maxTokens: 120, overlapTokens: 20 };
    const { result, stallMs } = await loopStall(() => sandbox.parseChunks(bytes, 'markdown', 'notes.md', opts));
    const here = chunkDocument(await parseDocument(bytes, 'markdown', 'notes.md'), opts);
    expect(result).toEqual({ title: 'Chapter 1', chunks: here });
    expect(here.length).toBeGreaterThan(100);
    expect(stallMs).toBeLessThan(1_000);
  });

  it('leaves a process with nothing more to do free to exit, the threads it keeps for later work included', async () => {
    // Before: a kept thread's port held the process open for good (`dev` never exited on Ctrl-C after an upload).
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'bin', 'run-ts.mjs'), path.join(ROOT, 'test', 'support', 'threads-then-exit.ts')],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null | 'still running'>((resolve) => {
      const timer = setTimeout(() => resolve('still running'), 60_000);
      child.once('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    child.kill('SIGKILL');
    expect(out).toMatch(/^parsed \d+ chunks and \d+ characters\n$/);
    expect(code).toBe(0);
  }, 90_000);

  it('reports a file no parser can read as unreadable, not as too large', async () => {
    const err = await sandbox.parse(fx.makeCorruptDocx(), 'docx', 'broken.docx').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentUnreadable);
    expect(err).not.toBeInstanceOf(DocumentTooLarge);
    expect((err as Error).message).toMatch(/^DOCX: not a readable ZIP/);
  });
});
