// Steering a running research (the `steer` update): guidance reaches every later model call, a
// pending step's new description reaches its researcher, an added step runs, a dropped one does
// not, wrapUp ends the research with a report at once, and what cannot be done now is refused with
// the reason.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClientCommand } from '../../src/cli/commands';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, LoggedRequest, Reply } from '../support/llm-server';
import { defaultReact, planJson, researchRules, stepTitleOf } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());
const GUIDANCE = 'Focus on costs in Europe.';

/** Step a's first turn takes a while, so that the test can steer while it runs. */
const slowFirstTurnOfA = (req: ChatRequest): Reply => {
  const reply = defaultReact(req);
  const first = !req.messages.some((m) => m.role === 'tool');
  return stepTitleOf(req) === 'Step a' && first ? { ...reply, delayMs: 2_500 } : reply;
};

const system = (r: LoggedRequest) => String(r.body.messages[0]?.content ?? '');

describe.skipIf(!ready)(`steering (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  /** Starts a run and returns while its step a's first turn is at the model (the step's status says
   *  running a little before that turn is sent, and a wrap-up then would make the first turn answer);
   *  `from`: where its model calls begin in the log. */
  async function startWhileAruns(
    plan: ReturnType<typeof planJson>,
    react: (req: ChatRequest) => Reply = slowFirstTurnOfA,
  ): Promise<{ id: string; from: number }> {
    h.llm.script(researchRules({ react }, plan));
    const from = h.llm.requests.length;
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'What does solar power cost?', options: { autoAcceptPlan: true, maxResearchLoops: 0 } })
      .expect(202);
    const id = res.body.id as string;
    const firstTurnOfA = () => h.llm.requests.slice(from).some((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step a');
    for (let i = 0; ; i++) {
      const s = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body;
      if (s.plan?.steps.find((x: { id: string }) => x.id === 'a')?.status === 'running' && firstTurnOfA()) break;
      if (i > 200) throw new Error("step a's first turn never reached the model");
      await new Promise((r) => setTimeout(r, 50));
    }
    return { id, from };
  }
  const steer = (id: string, body: object) => request(h.app).post(`/v1/research/${id}/steer`).send(body);

  it('gives every later model call the guidance, edits a pending step, adds a step, and refuses what cannot change', async () => {
    const { id } = await startWhileAruns(planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]));
    const before = h.llm.requests.length;
    expect((await steer(id, { kind: 'guidance', text: GUIDANCE }).expect(200)).body).toMatchObject({ kind: 'guidance', accepted: true });
    const guidedFrom = h.llm.requests.length;
    // The CLI's steer command, against the API on a port.
    const server = http.createServer(h.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const out: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void out.push(t), ask: async () => undefined };
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const code = await runClientCommand(
      'steer',
      [id, '--edit', 'b', '--description', 'Compare module prices in Germany and Spain', '--api', api],
      { api, key: undefined },
      io,
    );
    server.close();
    expect([code, out.join('')]).toEqual([0, 'editStep taken (plan v1)\n']);
    const added = await steer(id, {
      kind: 'addStep',
      step: { id: 'c', title: 'Storage costs', description: 'Find battery storage costs', dependsOn: ['a'] },
    }).expect(200);
    expect(added.body.planVersion).toBe(2);
    // Refused with the reason: a running step, an unknown one, a duplicate id, empty guidance.
    expect((await steer(id, { kind: 'editStep', stepId: 'a', description: 'x' }).expect(409)).body.error).toMatchObject({
      code: 'step_not_pending',
    });
    expect((await steer(id, { kind: 'dropStep', stepId: 'zzz' }).expect(409)).body.error.code).toBe('unknown_step');
    expect((await steer(id, { kind: 'addStep', step: { id: 'b', title: 'B', description: 'B' } }).expect(409)).body.error.code).toBe(
      'duplicate_step',
    );
    await steer(id, { kind: 'guidance', text: '  ' }).expect(400);

    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const status = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body;
    expect(status.plan.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ]);
    expect(status.steering).toEqual({ guidance: [GUIDANCE], bannedDomains: [], wrappingUp: false });
    expect(status.notes.join('\n')).toContain(`Guidance from the user: "${GUIDANCE}"`);
    // Each accepted message is a `steer` event in the run's log (the timeline), in order.
    const { rows } = await h.pool.query("SELECT data FROM run_events WHERE research_id = $1 AND type = 'steer' ORDER BY seq", [id]);
    expect(rows.map((r: { data: { kind: string } }) => r.data.kind)).toEqual(['guidance', 'editStep', 'addStep']);
    // No call made before the guidance had it; every call sent after the API answered has it.
    expect(h.llm.requests.slice(0, before).some((r) => system(r).includes(GUIDANCE))).toBe(false);
    const later = h.llm.requests.slice(guidedFrom);
    expect(later.length).toBeGreaterThan(5);
    expect(later.filter((r) => !system(r).includes(GUIDANCE)).map((r) => r.rule)).toEqual([]);
    expect(later.map((r) => r.rule)).toEqual(expect.arrayContaining(['react', 'researcher', 'judge', 'reporter']));
    // Step b's researcher worked on the new description; step c ran with its own.
    const forB = later.filter((r) => stepTitleOf(r.body) === 'Step b');
    expect(forB.length).toBeGreaterThan(0);
    expect(forB.every((r) => JSON.stringify(r.body.messages).includes('Compare module prices in Germany and Spain'))).toBe(true);
    expect(later.some((r) => stepTitleOf(r.body) === 'Storage costs')).toBe(true);
    recordHistories([[id, 'steered.json']]);
  });

  it('wraps up: the running step answers at its next turn, pending and dropped steps are skipped, the report is written', async () => {
    const { id, from } = await startWhileAruns(planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['a'] }]));
    await steer(id, { kind: 'dropStep', stepId: 'c' }).expect(200);
    const wrapped = h.llm.requests.length;
    await steer(id, { kind: 'wrapUp' }).expect(200);
    expect((await steer(id, { kind: 'wrapUp' }).expect(409)).body.error.code).toBe('already_wrapping_up');
    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const status = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body;
    expect(status.plan.steps.map((s: { id: string; status: string; summary?: string }) => [s.id, s.status, s.summary])).toEqual([
      ['a', 'completed', expect.any(String)],
      ['b', 'skipped', 'skipped: the user asked to wrap up'],
      ['c', 'skipped', 'skipped: dropped by the user'],
    ]);
    const after = h.llm.requests.slice(wrapped);
    // Step a's turn after the wrap-up was offered no tools (answer now): two turns where it takes
    // three (search, crawl, answer) unsteered; then no judge, no gap reflection, the report.
    const turnsOfA = h.llm.requests.slice(from).filter((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step a');
    expect(turnsOfA.map((r) => r.body.tools?.length ?? 0)).toEqual([4, 0]);
    expect(after.map((r) => r.rule)).not.toContain('judge');
    expect(after.map((r) => r.rule)).toContain('reporter');
    // Once the run has ended, steering is refused.
    expect((await steer(id, { kind: 'guidance', text: 'Too late' }).expect(409)).body.error.code).toMatch(/run_ended|not_running/);
    recordHistories([
      [id, 'wrapup.json'],
      [`${id}/step/a`, 'researcher-wrapup.json'],
    ]);
  });

  it('bans a domain: its pages are not fetched, its search results are dropped, its sources leave the report', async () => {
    const page = '/never-fetched.html';
    // Step a crawls a page on the site, then searches, then answers; the ban arrives during turn 1.
    const react = (req: ChatRequest): Reply => {
      if (stepTitleOf(req) !== 'Step a') return defaultReact(req);
      const tools = req.messages.filter((m) => m.role === 'tool').length;
      if (tools === 0)
        return { toolCalls: [{ name: 'crawl', arguments: { urls: [`${h.site.url}${page}`], goal: 'costs' } }], delayMs: 2_500 };
      if (tools === 1) return { toolCalls: [{ name: 'web_search', arguments: { queries: ['solar cost'] } }] };
      return { content: 'Done.' };
    };
    const { id, from } = await startWhileAruns(planJson([{ id: 'a' }]), react);
    const host = new URL(h.site.url).hostname;
    await steer(id, { kind: 'banDomains', domains: ['https://example.com/x'] }).expect(400);
    expect((await steer(id, { kind: 'banDomains', domains: [host] }).expect(200)).body.kind).toBe('banDomains');
    expect(((await h.client.workflow.getHandle(id).result()) as ResearchResult).outcome).toBe('report');

    expect(h.site.hits).not.toContain(page);
    const turns = h.llm.requests.slice(from).filter((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step a');
    const toolText = (r: LoggedRequest) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolText(turns[1]!).join('\n')).toContain(`the user banned ${host} from this research`);
    // The search after the ban found the site's pages and dropped every one of them.
    expect(toolText(turns[2]!).at(-1)).not.toContain(h.site.url);
    const report = (await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200)).body;
    expect(report.references).toEqual([]);
    expect(report.markdown).not.toContain(h.site.url);
    const status = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body;
    expect(status.steering.bannedDomains).toEqual([host]);
    recordHistories([[id, 'ban.json']]);
  });

  it('reads the pages the user names in a step of their own, shown to its researcher before its first turn', async () => {
    const page = '/articles/user-named.html';
    h.site.route(page, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<html><head><title>Named by the user</title></head><body><article><p>Rooftop solar in Spain costs 0.05 EUR/kWh.</p><p>Utility-scale plants cost less.</p></article></body></html>',
      );
    });
    const url = `${h.site.url}${page}`;
    const { id, from } = await startWhileAruns(planJson([{ id: 'a' }]));
    await steer(id, { kind: 'mustRead', urls: ['ftp://example.com/x'] }).expect(400);
    await steer(id, { kind: 'mustRead', urls: [] }).expect(400);
    const unknown = await steer(id, { kind: 'mustRead', collections: ['col-nope'] }).expect(404);
    expect(unknown.body.error.code).toBe('collection_not_found');
    const taken = (await steer(id, { kind: 'mustRead', urls: [url] }).expect(200)).body;
    expect(taken).toMatchObject({ kind: 'mustRead', planVersion: 2 });
    expect(((await h.client.workflow.getHandle(id).result()) as ResearchResult).outcome).toBe('report');

    // Fetched by the crawler, by the new step, before its first model turn, which is shown it.
    expect(h.site.hits).toContain(page);
    const status = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body;
    const added = status.plan.steps.find((s: { title: string }) => s.title === 'Pages the user asked to read');
    expect(added).toMatchObject({ status: 'completed' });
    const first = h.llm.requests.slice(from).find((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Pages the user asked to read')!;
    const shown = first.body.messages[2]!;
    expect(shown.role).toBe('user');
    expect(String(shown.content)).toMatch(/^The user asked that these pages be read/);
    expect(String(shown.content)).toContain(url);
    expect(first.body.messages.some((m) => m.role === 'assistant')).toBe(false);
    // Step a's researcher, running when the message came, never read the page.
    const aTurns = h.llm.requests.slice(from).filter((r) => r.rule === 'react' && stepTitleOf(r.body) === 'Step a');
    expect(aTurns.every((r) => !JSON.stringify(r.body.messages).includes(page))).toBe(true);
    expect(status.notes.join('\n')).toContain('The user asked the run to read 1 page');
    recordHistories([
      [id, 'mustread.json'],
      [`${id}/step/pages-1`, 'researcher-pages.json'],
    ]);
  });
});
