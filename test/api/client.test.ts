// The typed client (src/client) against a live API: it starts a run, approves its plan while it
// follows the events, survives a connection cut in the middle of the stream (resuming from the
// last event it gave, none twice, none lost), reads the report as Markdown, JSON and Word, and
// turns the API's error bodies into ClientErrors with status, code, message and details.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mammoth from 'mammoth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError, createClient, type Client, type RunEvent } from '../../src/client';
import { runClientCommand } from '../../src/cli/commands';
import { readPptx } from '../support/pptx-reader';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { listen, type RunningServer } from '../support/http';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

const REPORT = [
  '## Key points',
  '',
  'Solar got much cheaper [1], and batteries followed [2].',
  '',
  '| Year | USD per kWh |',
  '| --- | --- |',
  '| 2010 | 0.445 [1] |',
  '| 2022 | 0.049 [1] |',
  '',
  '- Costs fell sharply [1].',
  '- Batteries too [2].',
].join('\n');

/** A body that delivers `n` events, then fails as a reset connection does (the rest of its chunk is lost). */
function cutAfter(body: ReadableStream<Uint8Array>, n: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = '';
  let sent = 0;
  let events = 0;
  return new ReadableStream({
    async pull(controller) {
      // Erroring drops what is queued: the reset comes at the read after the n-th event.
      if (events >= n) {
        await reader.cancel();
        return controller.error(new TypeError('terminated: other side closed'));
      }
      const { value, done } = await reader.read();
      if (done) return controller.close();
      text += decoder.decode(value, { stream: true });
      for (let cut = text.indexOf('\n\n', sent); cut >= 0; cut = text.indexOf('\n\n', sent)) {
        const block = text.slice(sent, cut + 2);
        sent = cut + 2;
        controller.enqueue(encoder.encode(block));
        if (/^id: /m.test(block) && ++events === n) return;
      }
    },
    cancel: () => reader.cancel(),
  });
}

describe.skipIf(!ready)(`typed client (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let api: RunningServer;
  /** Last-Event-ID of each events request the client made. */
  const eventRequests: (string | null)[] = [];
  let client: Client;

  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules({ reporter: { json: { title: 'Solar costs', markdown: REPORT } } }));
    api = await listen(h.app);
    // The first events connection is cut after three events; the others run through.
    const cutting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith('/events')) return res;
      eventRequests.push(new Headers(init?.headers).get('last-event-id'));
      if (eventRequests.length > 1 || !res.body) return res;
      return new Response(cutAfter(res.body, 3), { status: res.status, headers: res.headers });
    };
    client = createClient({ baseUrl: api.url, fetch: cutting });
  });
  afterAll(async () => {
    await api?.close();
    await h?.close();
  });

  it('starts a run, approves its plan while following it, resumes after a cut without duplicates, and reads the report', async () => {
    const { id, status } = await client.research.start({ question: 'How much cheaper has solar become?' });
    expect(status).toBe('running');

    const seen: RunEvent[] = [];
    const states: string[] = [];
    for await (const e of client.events(id, { onState: (s) => states.push(s), retryDelayMs: 100 })) {
      seen.push(e);
      if (e.type === 'phase' && e.data.phase === 'reviewing') {
        const plan = [...seen].reverse().find((x) => x.type === 'plan');
        expect(plan?.type).toBe('plan');
        const answer = await client.research.approve(id, plan!.type === 'plan' ? plan!.data.version : 0);
        expect(answer.decision).toBe('approved');
      }
    }
    expect(seen.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    // The cut: one reconnect, from the third event's id.
    expect(eventRequests.length).toBeGreaterThanOrEqual(2);
    expect(eventRequests[0]).toBe('0');
    expect(eventRequests[1]).toBe(String(seen[2]!.id));
    expect(states).toContain('reconnecting');
    // Every event once, in order: the same as a reading from the start that nothing cut.
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const again: number[] = [];
    for await (const e of client.events(id)) again.push(e.id);
    expect(again).toEqual(ids);

    const view = await client.research.get(id);
    expect(view).toMatchObject({ id, status: 'completed' });
    const markdown = await client.research.report(id);
    expect(markdown).toMatch(/^# Solar costs/);
    const json = await client.research.reportJson(id);
    expect(json.title).toBe('Solar costs');
    const firstUrl = json.references.find((r) => r.n === 1)!.url;
    expect(firstUrl).toContain(h.site.url);
    expect(markdown).toContain(`1. [`);

    // The Word export, opened by a DOCX reader (mammoth): title, table, citations linked to the
    // references, and each reference's address as a hyperlink.
    const docx = await client.research.reportFile(id, 'docx');
    expect(docx.type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    const bytes = Buffer.from(await docx.arrayBuffer());
    expect(bytes.subarray(0, 2).toString()).toBe('PK');
    const { value: html } = await mammoth.convertToHtml({ buffer: bytes });
    expect(html).toMatch(/^<h1>Solar costs<\/h1>/);
    expect(html).toMatch(/<h2>Key points<\/h2>/);
    expect(html).toMatch(/<table><thead><tr><th><p><strong>Year<\/strong><\/p><\/th><th><p><strong>USD per kWh<\/strong><\/p><\/th><\/tr>/);
    expect(html).toMatch(/<td><p>0\.445 <a href="#ref_1">\[1\]<\/a><\/p><\/td>/);
    expect(html).toMatch(/Solar got much cheaper <a href="#ref_1">\[1\]<\/a>, and batteries followed <a href="#ref_2">\[2\]<\/a>/);
    expect(html).toMatch(/<h2>References<\/h2><ol><li><a id="ref_1"><\/a>/);
    expect(html).toContain(`<a href="${firstUrl.replace(/&/g, '&amp;')}">${firstUrl.replace(/&/g, '&amp;')}</a>`);
  });

  it('deep-research report --format docx and pptx write the Word file and the slides (the CLI goes through the same client)', async () => {
    const { id } = await client.research.start({ question: 'How much cheaper has solar become?', options: { autoAcceptPlan: true } });
    for await (const _ of client.events(id)) void _;
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'report-')), 'r.docx');
    let out = '';
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (out += t), ask: async () => undefined };
    expect(await runClientCommand('report', [id, '--format', 'docx', '--out', file], { api: api.url, key: undefined }, io)).toBe(0);
    expect(out).toBe(`${file}\n`);
    const { value: html } = await mammoth.convertToHtml({ buffer: readFileSync(file) });
    expect(html).toMatch(/^<h1>Solar costs<\/h1>/);
    expect(html).toMatch(/<table>/);

    // Slides the same way: the typed client's file, and the CLI's --format pptx.
    const deck = await client.research.reportFile(id, 'pptx');
    expect(deck.type).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation');
    const pptx = path.join(path.dirname(file), 'r.pptx');
    expect(await runClientCommand('report', [id, '--format', 'pptx', '--out', pptx], { api: api.url, key: undefined }, io)).toBe(0);
    expect(out).toBe(`${file}\n${pptx}\n`);
    const { slides } = await readPptx(readFileSync(pptx));
    expect(slides.map((s) => s.title).slice(0, 3)).toEqual(['Solar costs', 'Executive summary', 'Key points']);
    expect(
      Buffer.from(await deck.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');
  });

  it('answers a missing run with a typed 404, and a bad request with its details', async () => {
    const missing = await client.research.get('research-does-not-exist').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ClientError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    expect((missing as ClientError).message).toMatch(/research-does-not-exist/);

    const bad = await client.research.start({ question: '   ' }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((bad as ClientError).details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'question' })]));

    const gone = await createClient({ baseUrl: 'http://127.0.0.1:9' })
      .research.list()
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 0, code: 'unreachable' });
  });
});
