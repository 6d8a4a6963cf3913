// Coder steps: the model writes Python, the sandbox runs it, errors go back for a fix, charts
// become artifacts that the report links.
import Docker from 'dockerode';
import mammoth from 'mammoth';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { DEFAULT_PROGRAM, planJson, researchRules, userText, type RoleOverrides } from '../support/research-script';
import { binary } from '../support/binary';
import { startHarness, type Harness } from '../support/harness';
import { pdfToText } from '../../src/activities/crawl/extract';
import { databaseUrl, dockerAvailable, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl() && dockerAvailable());
const plan = planJson([{ id: 'a' }, { id: 'calc', type: 'processing', dependsOn: ['a'] }]);

describe.skipIf(!ready)(`coder steps (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { SANDBOX_TIMEOUT_S: '10' } });
  });
  afterAll(async () => h?.close());

  const requestsFor = (rule: string) => h.llm.requests.filter((r) => r.rule === rule);
  async function run(overrides: RoleOverrides, options: Record<string, unknown> = {}): Promise<{ id: string; result: ResearchResult }> {
    h.llm.script(researchRules(overrides, plan));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How fast did solar costs fall?', options: { autoAcceptPlan: true, ...options } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    return { id: res.body.id, result };
  }

  it('computes a table from the research results and produces a PNG chart that the report links', async () => {
    const { id, result } = await run({});
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'calc', status: 'completed', attempts: 1 },
    ]);
    // The program saw the research step's findings as a file, and the package list.
    const coder = requestsFor('coder')[0]!;
    expect(userText(coder.body)).toMatch(/Input files in the working directory \/work: step_a_1\.md/);
    expect(coder.body.messages[0]!.content).toMatch(/Available packages .*numpy, pandas, matplotlib, scipy, scikit-learn/);
    // Its output reached the results writer.
    expect(userText(requestsFor('analyst')[0]!.body)).toMatch(/input files: 1\n\| year \| usd\/kWh \|\n\| 2010 \| 0\.445 \|/);
    const list = await request(h.app).get(`/v1/research/${id}/artifacts`).expect(200);
    expect(list.body.artifacts).toEqual([
      expect.objectContaining({
        artifactId: 'calc-101-lcoe.png',
        name: 'lcoe.png',
        contentType: 'image/png',
        url: `/v1/research/${id}/artifacts/calc-101-lcoe.png`,
      }),
    ]);
    const png = await request(h.app).get(`/v1/research/${id}/artifacts/calc-101-lcoe.png`).buffer(true).parse(binary).expect(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['x-content-type-options']).toBe('nosniff');
    expect((png.body as Buffer).subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    // The stored report links the chart by its path; the Markdown download by its whole address.
    const json = await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200);
    expect(json.body.markdown).toContain(`![calc-101-lcoe.png](/v1/research/${id}/artifacts/calc-101-lcoe.png)`);
    expect(json.body.doc.charts).toEqual([{ artifactId: 'calc-101-lcoe.png', path: `/v1/research/${id}/artifacts/calc-101-lcoe.png` }]);
    const report = await request(h.app).get(`/v1/research/${id}/report`).expect(200);
    expect(report.text).toMatch(
      new RegExp(`!\\[calc-101-lcoe\\.png\\]\\(http://127\\.0\\.0\\.1:\\d+/v1/research/${id}/artifacts/calc-101-lcoe\\.png\\)`),
    );
    await request(h.app).get(`/v1/research/${id}/artifacts/nope.png`).expect(404);
    // The findings activity judged the coder's findings: the run scheduled no judge of its own, and
    // the judge was asked after the results writer, once for each step.
    const scheduled = async (wid: string) =>
      (await h.client.workflow.getHandle(wid).fetchHistory()).events!.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
    expect(await scheduled(id)).not.toContain('judgeStep');
    expect(await scheduled(`${id}/step/calc`)).toEqual(['writeCode', 'runCode', 'finishCoderStep']);
    expect(requestsFor('judge')).toHaveLength(2);
    const order = h.llm.requests.map((r) => r.rule);
    expect(order.lastIndexOf('judge')).toBeGreaterThan(order.indexOf('analyst'));
    recordHistories([
      [id, 'coder-judged.json'],
      [`${id}/step/calc`, 'coder-step-judged.json'],
    ]);
  });

  it('exports the report as self-contained HTML, PDF and Word: the table, the citations, the chart', async () => {
    const reporter: Reply = {
      json: {
        title: 'Solar got cheaper',
        markdown: [
          'Utility solar costs fell by about 89% between 2010 and 2022 [1]. <script>alert(1)</script>',
          '',
          '| Year | USD per kWh |',
          '|---|---|',
          '| 2010 | 0.445 [1] |',
          '| 2022 | 0.049 |',
          '',
          'The step computed the same fall [1].',
        ].join('\n'),
      },
    };
    const { id } = await run({ reporter });
    const md = (await request(h.app).get(`/v1/research/${id}/report`).expect(200)).text;
    const refUrl = /## References\n\n1\. \[[^\]]*\]\(([^)]+)\)/.exec(md)![1]!;

    const html = await request(h.app).get(`/v1/research/${id}/report?format=html`).expect(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.headers['content-security-policy']).toBe("default-src 'none'; img-src data:; style-src 'unsafe-inline'");
    expect(html.text).toMatch(/<table>[\s\S]*<td>0\.445 \[<a href="#ref-1" class="cite">1<\/a>\]<\/td>/);
    expect(html.text).toMatch(/<li id="ref-1"><a href="[^"]+" rel="noopener noreferrer">/);
    expect(html.text).toMatch(/<img src="data:image\/png;base64,iVBORw0KGgo/);
    expect(html.text).not.toMatch(/<script>alert|src="\/v1\//);

    const pdf = await request(h.app).get(`/v1/research/${id}/report?format=pdf`).buffer(true).parse(binary).expect(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toMatch(/^attachment; filename="report-[0-9a-f-]{12}\.pdf"$/);
    const text = (await pdfToText(pdf.body as Buffer)).markdown;
    expect(text).toMatch(/Solar got cheaper/);
    expect(text).toMatch(/by about 89% between 2010 and 2022 \[1\]/);
    expect(text).toMatch(/Year USD per kWh 2010 0\.445 \[1\] 2022 0\.049/);
    expect(text.replace(/\s+/g, '')).toContain(refUrl.replace(/\s+/g, ''));
    expect((pdf.body as Buffer).includes(Buffer.from('/Subtype /Image'))).toBe(true);

    // Word: the table with its linked citation, the chart as a picture (mammoth, a DOCX reader, inlines it).
    const word = await request(h.app).get(`/v1/research/${id}/report?format=docx`).buffer(true).parse(binary).expect(200);
    expect(word.headers['content-disposition']).toMatch(/^attachment; filename="report-[0-9a-f-]{12}\.docx"$/);
    const wordHtml = (await mammoth.convertToHtml({ buffer: word.body as Buffer })).value;
    expect(wordHtml).toMatch(/^<h1>Solar got cheaper/);
    expect(wordHtml).toMatch(/<td><p>0\.445 <a href="#ref_1">\[1\]<\/a><\/p><\/td>/);
    expect(wordHtml).toMatch(/<img [^>]*src="data:image\/png;base64,iVBORw0KGgo/);
    expect(wordHtml).toContain(`<a href="${refUrl.replace(/&/g, '&amp;')}">`);
    await request(h.app).get(`/v1/research/${id}/report?format=odt`).expect(400);
  });

  it('sends a failing program back to the model with the error, and runs the fix', async () => {
    const coder = (_req: ChatRequest, n: number): Reply => ({ json: { code: n === 0 ? 'print(1/0)' : DEFAULT_PROGRAM, explanation: 'x' } });
    const { id, result } = await run({ coder });
    expect(result.steps?.[1]).toEqual({ id: 'calc', status: 'completed', attempts: 1 });
    const calls = requestsFor('coder');
    expect(calls).toHaveLength(2);
    expect(userText(calls[1]!.body)).toMatch(
      /Your previous program failed \(error: exit code 1: ZeroDivisionError: division by zero\)\. Fix it\./,
    );
    expect(userText(calls[1]!.body)).toMatch(/print\(1\/0\)/);
    recordHistories([[`${id}/step/calc`, 'coder-fix.json']]);
  });

  it('gives up after maxCodeAttempts and reports the failure to reflection and the report', async () => {
    const { id, result } = await run(
      { coder: { json: { code: 'import nonexistent_package', explanation: 'x' } } },
      { maxCodeAttempts: 2, maxReflectionAttempts: 0 },
    );
    expect(result.steps?.[1]).toEqual({ id: 'calc', status: 'completed', attempts: 1 });
    expect(requestsFor('coder')).toHaveLength(2);
    expect(userText(requestsFor('analyst')[0]!.body)).toMatch(
      /the program failed after 2 attempt\(s\): exit code 1: ModuleNotFoundError: No module named 'nonexistent_package'/,
    );
    const { rows } = await h.pool.query(
      "SELECT count(*)::int AS n, bool_and(status = 'error') AS all_failed FROM sandbox_runs WHERE research_id = $1",
      [id],
    );
    expect(rows[0]).toEqual({ n: 2, all_failed: true });
  });

  it('goes on when the model writes no usable program: the step says what it could not compute, the report says why', async () => {
    const { id, result } = await run({ coder: { content: 'I would rather not write code.' } }, { maxReflectionAttempts: 0 });
    expect(result.status).toBe('completed');
    expect(result.steps?.[1]).toEqual({ id: 'calc', status: 'completed', attempts: 1 });
    // The answer and its two repairs, once: no program, so nothing ran and nothing was written up by the model.
    expect(requestsFor('coder')).toHaveLength(3);
    expect(requestsFor('analyst')).toHaveLength(0);
    const runs = await h.pool.query('SELECT count(*)::int AS n FROM sandbox_runs WHERE research_id = $1', [id]);
    expect(runs.rows[0].n).toBe(0);
    const step = await h.pool.query("SELECT content, meta FROM documents WHERE research_id = $1 AND key LIKE 'step/calc/%'", [id]);
    expect(step.rows[0].content).toMatch(
      /^This processing step was not computed: no usable program could be written for it\. What it was to compute: /,
    );
    expect(step.rows[0].meta).toMatchObject({ sandboxStatus: 'none', attempts: 0 });
    const report = await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200);
    expect(report.body.markdown).toMatch(
      /Fallback \(coder\): no program was written for "[^"]+": its findings say what it could not compute, because the model/,
    );
  });

  it("quotes the program's output when the model cannot write the findings up", async () => {
    const { id, result } = await run({ analyst: { content: 'no findings from me' } }, { maxReflectionAttempts: 0 });
    expect(result.steps?.[1]).toEqual({ id: 'calc', status: 'completed', attempts: 1 });
    const step = await h.pool.query("SELECT content, summary FROM documents WHERE research_id = $1 AND key LIKE 'step/calc/%'", [id]);
    const content = step.rows[0].content as string;
    expect(content).toMatch(
      /^The step's program ran \(Tabulates the cost figures and plots them\.\)\. What it printed:\n\n```text\ninput files: /,
    );
    expect(content).toContain('| 2022 | 0.049 |');
    // The chart it kept and the program itself are there as with the model's findings.
    expect(content).toMatch(/!\[lcoe\.png\]\(artifact:/);
    expect(content).toContain('<details><summary>Program (ok)</summary>');
    expect(step.rows[0].summary).toMatch(/its program ran; its output is quoted as printed/);
    const report = await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200);
    expect(report.body.markdown).toMatch(
      /Fallback \(coder\): the findings of "[^"]+" give its program's output as it printed it, because the model/,
    );
  });

  it('kills the container when the run is cancelled', async () => {
    h.llm.script(
      researchRules(
        { coder: { json: { code: 'import time\ntime.sleep(60)', explanation: 'waits' } } },
        planJson([{ id: 'calc', type: 'processing' }]),
      ),
    );
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'cancel me', options: { autoAcceptPlan: true } })
      .expect(202);
    const id = res.body.id as string;
    const filters = JSON.stringify({ label: [`org.deep-research.sandbox.run=${id}`] });
    const docker = new Docker();
    let deadline = Date.now() + 30_000;
    while ((await docker.listContainers({ filters })).length === 0) {
      if (Date.now() > deadline) throw new Error('no sandbox container appeared');
      await new Promise((r) => setTimeout(r, 100));
    }
    await request(h.app).post(`/v1/research/${id}/cancel`).expect(202);
    await expect(h.client.workflow.getHandle(id).result()).rejects.toThrow(/cancel/i);
    deadline = Date.now() + 20_000;
    while ((await docker.listContainers({ all: true, filters })).length > 0) {
      if (Date.now() > deadline) throw new Error('the sandbox container outlived the cancelled run');
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it('runs the sandbox on its own task queue', async () => {
    const { id } = await run({});
    const history = await h.client.workflow.getHandle(`${id}/step/calc`).fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runCode');
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]!.activityTaskScheduledEventAttributes!.taskQueue!.name).toBe(`${h.taskQueue}-sandbox`);
  });
});
