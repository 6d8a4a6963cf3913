// A run with a coder step's chart, its report exported as a slide deck through the API and read
// back (slide XML and relationships): the title, the executive summary, each section, the chart
// as a picture made from the step's PNG, and the references a citation jumps to. The JSON export
// gives the summary as a field.
import JSZip from 'jszip';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../support/llm-server';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { binary } from '../support/binary';
import { readPptx } from '../support/pptx-reader';
import { databaseUrl, dockerAvailable, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl() && dockerAvailable());
const plan = planJson([{ id: 'a' }, { id: 'calc', type: 'processing', dependsOn: ['a'] }]);
const reporter: Reply = {
  json: {
    title: 'Solar got cheaper',
    summary: 'Utility solar costs fell by about 89% between 2010 and 2022 [1]. The coder step computed the same fall.',
    markdown: [
      '## Key points',
      '',
      '- Utility solar costs fell by about 89% between 2010 and 2022 [1].',
      '- The fall came from cheaper modules and larger plants [1].',
      '',
      '## Cost analysis',
      '',
      'The levelised cost went from 0.445 to 0.049 USD per kWh [1]. The step computed the same fall.',
    ].join('\n'),
  },
};

describe.skipIf(!ready)(`slide deck export (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { SANDBOX_TIMEOUT_S: '10' } });
  });
  afterAll(async () => h?.close());

  it("exports title, summary, sections, the coder step's chart and the references a citation jumps to", async () => {
    h.llm.script(researchRules({ reporter }, plan));
    const started = await request(h.app)
      .post('/v1/research')
      // The user's memory has no part in an export: the run neither reads nor teaches it.
      .send({ question: 'How fast did solar costs fall?', options: { autoAcceptPlan: true, memory: false } })
      .expect(202);
    const id = started.body.id as string;
    await h.client.workflow.getHandle(id).result();

    const json = (await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200)).body as {
      summary?: string;
      markdown: string;
      references: { n: number; title: string; url: string; cited?: boolean }[];
    };
    expect(json.summary).toMatch(
      /^Utility solar costs fell by about 89% between 2010 and 2022 \[1\]\. The coder step computed the same fall\.$/,
    );
    expect(json.markdown).toMatch(
      /^# Solar got cheaper\n[\s\S]*\n## Executive summary\n\nUtility solar costs fell[\s\S]*\n## Key points\n/,
    );
    const ref1 = json.references.find((r) => r.n === 1)!;

    const res = await request(h.app).get(`/v1/research/${id}/report?format=pptx`).buffer(true).parse(binary).expect(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="report-[0-9a-f-]{12}\.pptx"$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const { slides, media } = await readPptx(res.body as Buffer);

    expect(slides.map((s) => s.title)).toEqual([
      'Solar got cheaper',
      'Executive summary',
      'Key points',
      'Cost analysis',
      'Charts',
      'References',
    ]);
    expect(slides[0]!.paragraphs[1]).toBe('How fast did solar costs fall?');
    expect(slides[0]!.paragraphs[2]).toMatch(/^[A-Z][a-z]+ \d{1,2}, 20\d\d$/);
    expect(slides[1]!.paragraphs.slice(1)).toEqual([
      'Utility solar costs fell by about 89% between 2010 and 2022 [1].',
      'The coder step computed the same fall.',
    ]);
    // A citation on a section slide jumps to the references slide, which lists that source.
    const cost = slides[3]!;
    expect(cost.paragraphs[1]).toBe('The levelised cost went from 0.445 to 0.049 USD per kWh [1].');
    const jump = cost.links.find((l) => l.text === '[1]')!;
    const refs = slides[jump.slide! - 1]!;
    expect(refs.title).toBe('References');
    expect(refs.paragraphs).toContain(`1. ${ref1.title}`);
    expect(refs.links).toContainEqual({ text: ref1.url, url: ref1.url });

    // The chart slide draws the step's PNG: the picture's bytes are the artifact's.
    const chartSlide = slides[4]!;
    expect(chartSlide.paragraphs).toEqual(['Charts', 'calc-101-lcoe.png']);
    expect(chartSlide.images).toHaveLength(1);
    expect(media).toEqual(chartSlide.images);
    const artifact = await request(h.app).get(`/v1/research/${id}/artifacts/calc-101-lcoe.png`).buffer(true).parse(binary).expect(200);
    const picture = await (await JSZip.loadAsync(res.body as Buffer)).file(media[0]!)!.async('nodebuffer');
    expect(picture.equals(artifact.body as Buffer)).toBe(true);
  });
});
