// A finished run's report rewritten from the same findings (POST /v1/research/:id/report): a
// workflow of its own that asks only the report's roles, reads no web and runs no step; the new
// version has resolved citations and its own usage; version 1 stays as it was. And the API's
// refusals: another tenant's run, a run without a report, a bad body or model; idempotency.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewriteWorkflowId, type RewriteResult } from '../../src/shared/report-versions';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';
import { listen } from '../support/http';
import { runClientCommand } from '../../src/cli/commands';
import { createStore } from '../../src/activities/store';

const ready = Boolean(temporalAddress() && databaseUrl());
const TENANT = `rewrite-${randomUUID().slice(0, 8)}`;
const OTHER = `rewrite-other-${randomUUID().slice(0, 8)}`;

/** The report roles: a rewrite asks these and nothing else. */
const REPORT_ROLES = new Set(['reporter', 'outline', 'section', 'verify']);

const systemOf = (req: ChatRequest) => String(req.messages[0]?.content ?? '');

/** The reporter writes German when the prompt asks for German, citing the first two references. */
const bilingualReporter = (req: ChatRequest): Reply =>
  /report, in German/.test(systemOf(req))
    ? {
        json: {
          title: 'Solarkosten im Überblick',
          markdown: '## Kernpunkte\n\n- Die Kosten für Solarstrom sind stark gefallen [1].\n- Auch Batterien wurden günstiger [2].',
        },
      }
    : { json: { title: 'Solar costs', markdown: '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].' } };

describe.skipIf(!ready)(`report rewrites (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let id: string;
  const api = () => request(h.app);

  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules({ reporter: bilingualReporter }, planJson([{ id: 'a' }, { id: 'b' }])));
    const res = await api()
      .post('/v1/research')
      .set('x-tenant-id', TENANT)
      .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true, memory: false } })
      .expect(202);
    id = res.body.id;
    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
  });
  afterAll(async () => h?.close());

  it('rewrites a finished run as a brief German report from the stored findings alone', async () => {
    const v1Json = (await api().get(`/v1/research/${id}/report?format=json`).set('x-tenant-id', TENANT).expect(200)).body;
    const v1Markdown = (await api().get(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).expect(200)).text;
    const runBefore = (await api().get(`/v1/research/${id}`).set('x-tenant-id', TENANT).expect(200)).body;
    expect(runBefore.usage.promptTokens).toBeGreaterThan(0);

    // From here on the doubles' logs hold only what the rewrite asks.
    h.llm.script(researchRules({ reporter: bilingualReporter }));
    const searched = h.search.queries.length;
    const fetched = h.site.hits.length;

    const started = await api()
      .post(`/v1/research/${id}/report`)
      .set('x-tenant-id', TENANT)
      .send({ reportLength: 'brief', locale: 'de' })
      .expect(202);
    expect(started.body).toEqual({ id, version: 2, status: 'writing' });
    const result = (await h.client.workflow.getHandle(rewriteWorkflowId(id, 2)).result()) as RewriteResult;
    expect(result.status).toBe('ready');

    // Only the report's roles were asked: no coordinator, planner, researcher, judge, extractor...
    const rules = h.llm.requests.map((r) => r.rule);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(REPORT_ROLES.has(String(rule)), `a rewrite asked the ${rule} role`).toBe(true);
    expect(rules.filter((r) => r === 'reporter')).toHaveLength(1);
    const reporter = h.llm.requests.find((r) => r.rule === 'reporter')!.body;
    expect(systemOf(reporter)).toMatch(/final research report, in German/);
    expect(systemOf(reporter)).toMatch(/Length: brief/);
    // The findings are the run's: the background and both accepted steps.
    expect([...userText(reporter).matchAll(/<finding key="([^"]+)">/g)].map((m) => m[1])).toEqual(
      expect.arrayContaining(['background', expect.stringMatching(/^step\/a\//), expect.stringMatching(/^step\/b\//)]),
    );
    // No search, no page read.
    expect(h.search.queries.length).toBe(searched);
    expect(h.site.hits.length).toBe(fetched);

    // The new version: German, its citations resolve to the run's sources.
    const v2 = (await api().get(`/v1/research/${id}/report?format=json&version=2`).set('x-tenant-id', TENANT).expect(200)).body;
    expect(v2.title).toBe('Solarkosten im Überblick');
    expect(v2.locale).toBe('de');
    expect(v2.markdown).toContain('Die Kosten für Solarstrom sind stark gefallen');
    const cited = [...v2.markdown.split(/^## /m)[1]!.matchAll(/\[(\d+)\]/g)].map((m: RegExpMatchArray) => Number(m[1]));
    expect(cited.length).toBeGreaterThan(0);
    const refs = new Map<number, { sourceId: string }>(v2.references.map((r: { n: number; sourceId: string }) => [r.n, r]));
    for (const n of cited) expect(refs.get(n)).toBeDefined();
    for (const r of refs.values()) {
      await api().get(`/v1/research/${id}/sources/${r.sourceId}`).set('x-tenant-id', TENANT).expect(200);
    }
    expect(v2.grounding.checked).toBeGreaterThan(0);
    expect(v2.grounding.unresolved).toBe(0);

    // Version 1 is byte for byte what it was.
    expect((await api().get(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).expect(200)).text).toBe(v1Markdown);
    expect((await api().get(`/v1/research/${id}/report?format=json`).set('x-tenant-id', TENANT).expect(200)).body).toEqual(v1Json);

    // The rewrite's usage is its own: on the version, not added to the run.
    const runAfter = (await api().get(`/v1/research/${id}`).set('x-tenant-id', TENANT).expect(200)).body;
    expect(runAfter.usage).toEqual(runBefore.usage);
    const list = (await api().get(`/v1/research/${id}/reports`).set('x-tenant-id', TENANT).expect(200)).body;
    expect(list.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    const [first, second] = list.versions;
    expect(first).toMatchObject({ version: 1, status: 'ready', title: v1Json.title, usage: runBefore.usage });
    expect(second).toMatchObject({
      version: 2,
      status: 'ready',
      title: 'Solarkosten im Überblick',
      options: { reportLength: 'brief', locale: 'de' },
    });
    expect(second.usage.promptTokens).toBeGreaterThan(0);
    expect(second.usage).toEqual(result.usage);

    // Every export serves the version.
    const html = await api().get(`/v1/research/${id}/report?format=html&version=2`).set('x-tenant-id', TENANT).expect(200);
    expect(html.text).toContain('Solarkosten im Überblick');
    await api().get(`/v1/research/${id}/report?format=docx&version=2`).set('x-tenant-id', TENANT).expect(200);
    await api().get(`/v1/research/${id}/report?version=9`).set('x-tenant-id', TENANT).expect(404);
    recordHistories([[rewriteWorkflowId(id, 2), 'rewrite.json']]);
  });

  it('writes a long version section by section for an audience, with the instructions as a delimited block', async () => {
    h.llm.script(researchRules({ reporter: bilingualReporter }));
    const started = await api()
      .post(`/v1/research/${id}/report`)
      .set('x-tenant-id', TENANT)
      .send({ reportLength: 'long', audience: 'city council members', instructions: 'Lead with costs per household.' })
      .expect(202);
    const version = started.body.version as number;
    expect(version).toBeGreaterThan(2);
    const result = (await h.client.workflow.getHandle(rewriteWorkflowId(id, version)).result()) as RewriteResult;
    expect(result.status).toBe('ready');
    const rules = h.llm.requests.map((r) => String(r.rule));
    expect(new Set(rules)).toEqual(new Set(['outline', 'section', 'verify']));
    for (const r of h.llm.requests.filter((x) => x.rule === 'outline' || x.rule === 'section')) {
      expect(userText(r.body)).toContain('<audience>\ncity council members\n</audience>');
      expect(userText(r.body)).toContain('<rewrite_instructions>\nLead with costs per household.\n</rewrite_instructions>');
    }
    const report = (await api().get(`/v1/research/${id}/report?format=json&version=${version}`).set('x-tenant-id', TENANT).expect(200))
      .body;
    expect(report.markdown).toMatch(/^## Part 1$/m);
    // The run's own report was written without either block.
    const own = (await api().get(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).expect(200)).text;
    expect(own).not.toContain('city council');
  });

  it('refuses another tenant, a bad body and a model the server does not allow', async () => {
    await api().post(`/v1/research/${id}/report`).set('x-tenant-id', OTHER).send({ reportLength: 'brief' }).expect(404);
    await api().get(`/v1/research/${id}/reports`).set('x-tenant-id', OTHER).expect(404);
    await api().get(`/v1/research/${id}/report?version=2`).set('x-tenant-id', OTHER).expect(404);
    const none = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({}).expect(400);
    expect(JSON.stringify(none.body)).toMatch(/at least one change/);
    await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ reportLength: 'epic' }).expect(400);
    await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ locale: 'xx-nope' }).expect(400);
    await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ tone: 'funny' }).expect(400);
    await api()
      .post(`/v1/research/${id}/report`)
      .set('x-tenant-id', TENANT)
      .send({ audience: 'x'.repeat(301) })
      .expect(400);
    const model = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ model: 'gpt-unknown' }).expect(400);
    expect(model.body.error.code).toBe('unknown_model');
    expect(model.body.error.message).toContain('scripted-default');
    await api().get(`/v1/research/${id}/report?version=0`).set('x-tenant-id', TENANT).expect(400);
  });

  it('answers 409 for a run that has no report yet', async () => {
    h.llm.script(researchRules());
    const res = await api().post('/v1/research').set('x-tenant-id', TENANT).send({ question: 'How far did wind costs fall?' }).expect(202);
    const waiting = res.body.id as string;
    try {
      for (let i = 0; i < 100; i++) {
        const s = (await api().get(`/v1/research/${waiting}`).set('x-tenant-id', TENANT).expect(200)).body;
        if (s.status === 'awaiting_review') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const refused = await api().post(`/v1/research/${waiting}/report`).set('x-tenant-id', TENANT).send({ locale: 'de' }).expect(409);
      expect(refused.body.error.code).toBe('no_report');
    } finally {
      await api().post(`/v1/research/${waiting}/cancel`).set('x-tenant-id', TENANT);
    }
  });

  it('gives the same version for a retried Idempotency-Key, and numbers concurrent rewrites apart', async () => {
    h.llm.script(researchRules({ reporter: bilingualReporter }));
    const key = `rw-${randomUUID()}`;
    const body = { reportLength: 'brief', model: 'scripted-default' };
    const a = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).set('Idempotency-Key', key).send(body).expect(202);
    const b = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).set('Idempotency-Key', key).send(body).expect(200);
    expect(b.body.version).toBe(a.body.version);
    const other = await api()
      .post(`/v1/research/${id}/report`)
      .set('x-tenant-id', TENANT)
      .set('Idempotency-Key', key)
      .send({ reportLength: 'standard' })
      .expect(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    await h.client.workflow.getHandle(rewriteWorkflowId(id, a.body.version)).result();

    const both = await Promise.all(
      [0, 1].map(() => api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ locale: 'fr' })),
    );
    const versions = both.map((r) => r.body.version as number);
    expect(both.map((r) => r.status)).toEqual([202, 202]);
    expect(new Set(versions).size).toBe(2);
    for (const v of versions) expect((await h.client.workflow.getHandle(rewriteWorkflowId(id, v)).result()).status).toBe('ready');
    const listed = (await api().get(`/v1/research/${id}/reports`).set('x-tenant-id', TENANT).expect(200)).body.versions;
    expect(listed.map((v: { version: number }) => v.version)).toEqual([...listed.keys()].map((i) => i + 1));
  });

  it('reads the findings of a run whose report kept no basis (a run from before versions) from its stored step results', async () => {
    h.llm.script(researchRules({ reporter: bilingualReporter }));
    const { rows } = await h.pool.query('SELECT basis FROM reports WHERE research_id = $1', [id]);
    const kept = rows[0].basis as { stepKeys: string[]; question: string };
    expect(kept.stepKeys).toEqual([expect.stringMatching(/^step\/a\//), expect.stringMatching(/^step\/b\//)]);
    await h.pool.query('UPDATE reports SET basis = NULL WHERE research_id = $1', [id]);
    try {
      const started = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ locale: 'de' }).expect(202);
      await h.client.workflow.getHandle(rewriteWorkflowId(id, started.body.version)).result();
      const reporter = h.llm.requests.find((r) => r.rule === 'reporter')!.body;
      expect([...userText(reporter).matchAll(/<finding key="([^"]+)">/g)].map((m) => m[1])).toEqual(['background', ...kept.stepKeys]);
    } finally {
      await h.pool.query('UPDATE reports SET basis = $2 WHERE research_id = $1', [id, JSON.stringify(kept)]);
    }
  });

  it("keeps the run's own length when none is asked for, and writes for the asker's memory", async () => {
    h.llm.script(researchRules({ reporter: bilingualReporter }, planJson([{ id: 'a' }])));
    const briefRun = await api()
      .post('/v1/research')
      .set('x-tenant-id', TENANT)
      .send({ question: 'How cheap did solar get?', options: { autoAcceptPlan: true, memory: false, reportLength: 'brief' } })
      .expect(202);
    await h.client.workflow.getHandle(briefRun.body.id).result();
    // The asker (open mode: the tenant's default user) has a fact in memory.
    const factId = `F${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    await h.pool.query(
      `INSERT INTO user_facts (id, tenant, user_id, category, text, norm, evidence) VALUES ($1, $2, 'default', 'field', $3, $4, '[]')`,
      [factId, TENANT, 'The user is a hydrologist.', 'user hydrologist'],
    );
    try {
      h.llm.script(researchRules({ reporter: bilingualReporter }));
      const started = await api()
        .post(`/v1/research/${briefRun.body.id}/report`)
        .set('x-tenant-id', TENANT)
        .send({ locale: 'fr' })
        .expect(202);
      const result = (await h.client.workflow
        .getHandle(rewriteWorkflowId(briefRun.body.id, started.body.version))
        .result()) as RewriteResult;
      expect(result.status).toBe('ready');
      const reporter = h.llm.requests.filter((r) => r.rule === 'reporter');
      expect(reporter).toHaveLength(1);
      expect(systemOf(reporter[0]!.body)).toContain('brief: about 250 to 500 words');
      expect(userText(reporter[0]!.body)).toMatch(/<user_memory>[\s\S]*The user is a hydrologist\.[\s\S]*<\/user_memory>/);
      // A rewrite of the standard run with only a locale stays standard.
      h.llm.script(researchRules({ reporter: bilingualReporter }));
      const again = await api().post(`/v1/research/${id}/report`).set('x-tenant-id', TENANT).send({ audience: 'engineers' }).expect(202);
      await h.client.workflow.getHandle(rewriteWorkflowId(id, again.body.version)).result();
      expect(systemOf(h.llm.requests.find((r) => r.rule === 'reporter')!.body)).toContain('about 800 to 1,500 words');
    } finally {
      await h.pool.query('DELETE FROM user_facts WHERE id = $1', [factId]);
    }
  });

  it('checks the tenant inside the workflow too: a version started for another tenant fails and says so', async () => {
    const store = createStore(h.pool);
    const allocated = await store.reportVersions.allocate({ researchId: id, tenant: TENANT, options: { locale: 'fr' }, requestHash: 'x' });
    const version = allocated!.row.version;
    h.llm.script(researchRules({ reporter: bilingualReporter }));
    await expect(
      h.client.workflow.execute('reportRewriteWorkflow', {
        taskQueue: h.taskQueue,
        workflowId: rewriteWorkflowId(id, version),
        args: [{ researchId: id, tenant: OTHER, version, options: { locale: 'fr' } }],
      }),
    ).rejects.toThrow();
    expect(h.llm.requests).toHaveLength(0);
    const row = await store.reportVersions.get(id, version);
    expect(row).toMatchObject({ status: 'failed', error: expect.stringMatching(/no report version/) });
    await api().get(`/v1/research/${id}/report?version=${version}`).set('x-tenant-id', TENANT).expect(404);
  });

  it('rewrites from the command line, waits and prints the new version; report --version reads it again', async () => {
    // The CLI acts for the open API's default tenant.
    h.llm.script(researchRules({ reporter: bilingualReporter }, planJson([{ id: 'a' }])));
    const res = await api()
      .post('/v1/research')
      .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true, memory: false } })
      .expect(202);
    const own = res.body.id as string;
    await h.client.workflow.getHandle(own).result();
    const server = await listen(h.app);
    try {
      let out = '';
      let err = '';
      const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t), ask: async () => undefined };
      const defaults = { api: server.url, key: undefined };
      expect(await runClientCommand('rewrite', [own, '--length', 'brief', '--locale', 'de'], defaults, io)).toBe(0);
      expect(out).toMatch(new RegExp(`^# version 2 of ${own}\n`));
      expect(out).toContain('Die Kosten für Solarstrom sind stark gefallen');
      out = '';
      expect(await runClientCommand('report', [own, '--version', '2'], defaults, io)).toBe(0);
      expect(out).toContain('# Solarkosten im Überblick');
      out = '';
      expect(await runClientCommand('report', [own], defaults, io)).toBe(0);
      expect(out).not.toContain('Solarkosten');
      out = '';
      expect(await runClientCommand('rewrite', [own, '--audience', 'pupils', '--no-wait', '--json'], defaults, io)).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ id: own, version: 3, status: 'writing' });
      await h.client.workflow.getHandle(rewriteWorkflowId(own, 3)).result();
      expect(err).toBe('');
      expect(await runClientCommand('rewrite', [own], defaults, io)).toBe(2);
      expect(err).toMatch(/rewrite needs at least one of --length/);
      expect(await runClientCommand('report', [own, '--version', 'two'], defaults, io)).toBe(2);
      expect(err).toMatch(/--version must be a report version/);
    } finally {
      await server.close();
    }
  });
});
