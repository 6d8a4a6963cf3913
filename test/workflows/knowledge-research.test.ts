// Research with the knowledge base and a session, through the API on the dev server: a question
// answered by an uploaded PDF (the researcher's knowledge_search finds it, the report cites it and
// the reference links to the document), then a follow-up in the same session whose collections
// the knowledge-base decision picks, which sees the earlier question and cites the earlier
// report's sources.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestWorkflowId } from '../../src/api/knowledge-service';
import type { ResearchResult } from '../../src/shared/schemas';
import { bySchema, type ChatRequest, type Reply } from '../support/llm-server';
import { makePdf } from '../support/kb-fixtures';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());
const allText = (req: ChatRequest) => req.messages.map((m) => m.content ?? '').join('\n');

/** A reporter that cites the references whose line matches `pick`. */
const citing =
  (pick: RegExp, title: string) =>
  (req: ChatRequest): Reply => {
    const refs = [...userText(req).matchAll(/^\[(\d+)\] (.*)$/gm)].filter((m) => pick.test(m[2]!)).map((m) => `[${m[1]}]`);
    return { json: { title, markdown: `## Key points\n\n- Lake Veyra holds 412 MW ${refs.join('')}.\n` } };
  };

/** A ReAct researcher that searches the knowledge base once, then answers. */
const kbReact =
  (query: string) =>
  (req: ChatRequest): Reply =>
    req.messages.some((m) => m.role === 'tool')
      ? { content: 'I have what I need.' }
      : { toolCalls: [{ name: 'knowledge_search', arguments: { query, alternatives: ['pumped hydro size'] } }] };

describe.skipIf(!ready)(`research with the knowledge base (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `kbr-${randomBytes(4).toString('hex')}`;
  const as = (r: request.Test) => r.set('x-tenant-id', tenant);
  let collection: string;
  let documentId: string;
  let session: string;
  let first: string;

  beforeAll(async () => {
    h = await startHarness();
    collection = (
      await as(request(h.app).post('/v1/collections'))
        .send({ name: 'Veyra', description: 'Fact sheets of the Lake Veyra plant' })
        .expect(201)
    ).body.id;
    documentId = (
      await as(request(h.app).post(`/v1/collections/${collection}/documents`))
        .attach('file', await makePdf(), { filename: 'veyra.pdf', contentType: 'application/pdf' })
        .expect(202)
    ).body.id;
    for (let i = 0; ; i++) {
      const d = await as(request(h.app).get(`/v1/collections/${collection}/documents/${documentId}`)).expect(200);
      if (d.body.status === 'ready') break;
      if (i > 100) throw new Error(`document not ready: ${JSON.stringify(d.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    session = (await as(request(h.app).post('/v1/sessions')).send({ title: 'Veyra' }).expect(201)).body.id;
    recordHistories([[ingestWorkflowId(documentId), 'ingest-document.json']]);
  });
  afterAll(async () => h?.close());

  async function finished(id: string) {
    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    return (await as(request(h.app).get(`/v1/research/${id}/report?format=json`)).expect(200)).body as {
      markdown: string;
      references: { n: number; sourceId: string; url: string; title: string }[];
    };
  }

  it('answers from an uploaded document: the report cites it and links to it', async () => {
    h.llm.script([
      ...researchRules({ react: kbReact('Lake Veyra capacity'), reporter: citing(/\/documents\//, 'Lake Veyra') }, planJson([{ id: 'a' }])),
    ]);
    const res = await as(request(h.app).post('/v1/research'))
      .send({
        question: 'How large is the Lake Veyra plant?',
        sessionId: session,
        options: { autoAcceptPlan: true, collections: [collection] },
      })
      .expect(202);
    first = res.body.id;
    const report = await finished(first);

    const docRefs = report.references.filter((r) => r.url.startsWith(`/v1/collections/${collection}/documents/${documentId}#chunk-`));
    expect(docRefs.length).toBeGreaterThan(0);
    expect(docRefs[0]!.title).toMatch(/Lake Veyra fact sheet \(p\. [12]\)/);
    expect(report.markdown).toContain(`[${docRefs[0]!.n}]`);
    expect(report.markdown).toMatch(
      new RegExp(`${docRefs[0]!.n}\\. \\[.*\\]\\(/v1/collections/${collection}/documents/${documentId}#chunk-`),
    );

    // The researcher was offered the tool and its answer held the document's passage.
    const react = h.llm.requests.filter((r) => r.rule === 'react');
    expect(react[0]!.body.tools!.map((t) => t.function.name)).toContain('knowledge_search');
    const toolAnswer = react.flatMap((r) => r.body.messages).find((m) => m.role === 'tool' && String(m.content).includes('Knowledge base'));
    expect(toolAnswer?.content).toMatch(/412 megawatts/);
    // The background brief was given the passages too.
    const background = h.llm.requests.find((r) => r.rule === 'background')!;
    expect(userText(background.body)).toMatch(/412 megawatts/);
    // The link resolves in the API.
    await as(request(h.app).get(`/v1/collections/${collection}/documents/${documentId}`)).expect(200);
  });

  it('follows up in the session: sees the earlier question, picks the collection, cites the earlier sources', async () => {
    const earlier = await finished(first);
    const earlierUrl = earlier.references[0]!.url;
    h.llm.script([
      {
        name: 'router',
        match: bySchema('KnowledgeChoice'),
        reply: (req) => ({ json: { collectionIds: [/id (C[0-9a-f]{16})/.exec(allText(req))![1]], reason: 'It is about Lake Veyra.' } }),
      },
      ...researchRules(
        {
          react: kbReact('Lake Veyra compared with wind'),
          reporter: citing(new RegExp(earlierUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'Veyra and wind'),
        },
        planJson([{ id: 'a' }]),
      ),
    ]);
    const res = await as(request(h.app).post('/v1/research'))
      .send({ question: 'Now compare that with wind.', sessionId: session, options: { autoAcceptPlan: true } })
      .expect(202);
    const report = await finished(res.body.id);

    // The query rewrite saw the earlier question and report.
    const rewrite = h.llm.requests.find((r) => r.rule === 'rewrite')!;
    expect(userText(rewrite.body)).toMatch(/<session_memory>[\s\S]*How large is the Lake Veyra plant\?[\s\S]*Lake Veyra/);
    // The knowledge-base decision chose the collection from its description.
    expect(allText(h.llm.requests.find((r) => r.rule === 'router')!.body)).toContain('Fact sheets of the Lake Veyra plant');
    // The report cites the earlier report's source.
    const cited = report.references.find((r) => r.url === earlierUrl);
    expect(cited).toBeDefined();
    expect(report.markdown).toContain(`[${cited!.n}]`);
    // knowledge_search also reached the earlier report, indexed as the session's memory.
    const toolAnswers = h.llm.requests
      .filter((r) => r.rule === 'react')
      .flatMap((r) => r.body.messages)
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(toolAnswers.join('\n')).toContain(`/v1/research/${first}/report`);

    const s = await as(request(h.app).get(`/v1/sessions/${session}`)).expect(200);
    expect(s.body.runs.map((r: { id: string }) => r.id)).toEqual([first, res.body.id]);
    const status = await as(request(h.app).get(`/v1/research/${res.body.id}`)).expect(200);
    expect(status.body.notes.join('\n')).toMatch(/Knowledge base: searched "Veyra"[\s\S]*|Follow-up in a session/);
    recordHistories([
      [res.body.id as string, 'knowledge.json'],
      [`${res.body.id}/step/a`, 'researcher-knowledge.json'],
    ]);
  });
});
