// The MCP server through the official SDK's client: over Streamable HTTP at /v1/mcp of a running
// API, and over stdio from `deep-research mcp`. A run started with autoAcceptPlan is followed to
// its report (progress notifications arrive while it runs), the report is read as a resource, and
// another tenant's key sees neither the run nor its report.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { createClient } from '../../src/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXT_FIXTURE } from '../support/kb-fixtures';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { ROOT } from '../support/spawn';

const ready = Boolean(temporalAddress() && databaseUrl());
const ACME = 'acme-mcp-key-0123456789';
const GLOBEX = 'globex-mcp-key-0123456789';

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

async function httpClient(url: string, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', url), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  return client;
}

/** follow_research until the run ends; every progress notification's message is collected. */
async function followToEnd(client: Client, id: string, progress: string[], from = 0): Promise<string> {
  let after = from;
  for (let i = 0; i < 20; i++) {
    const r = (await client.callTool({ name: 'follow_research', arguments: { id, after, timeoutSeconds: 20 } }, undefined, {
      onprogress: (p) => void progress.push(p.message ?? ''),
      timeout: 30_000,
    })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as { stopped: string; lastEventId: number; status?: string };
    if (s.stopped === 'done') return s.status!;
    expect(s.stopped).toBe('timeout');
    after = s.lastEventId;
  }
  throw new Error('the run did not end');
}

describe.skipIf(!ready)(`MCP server (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${ACME}=acme,${GLOBEX}=globex` } });
    h.llm.script(researchRules());
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await h?.close();
  });

  it('starts a run, follows it with progress to the report, reads the report resource; another tenant sees none of it', async () => {
    const acme = await httpClient(url, ACME);
    const toolList = (await acme.listTools()).tools;
    const tools = toolList.map((t) => t.name);
    // Each tool says what it does to the world (MCP annotations): reads are read-only, a start
    // reaches the open web, steering may drop planned work.
    const hints = Object.fromEntries(toolList.map((t) => [t.name, t.annotations]));
    for (const read of ['get_research', 'list_research', 'follow_research', 'get_report', 'list_collections', 'search_collection'])
      expect([read, hints[read]]).toEqual([
        read,
        { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      ]);
    expect(hints.start_research).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(hints.steer_research).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(toolList.every((t) => t.annotations !== undefined)).toBe(true);
    expect(tools).toEqual(
      expect.arrayContaining([
        'start_research',
        'get_research',
        'list_research',
        'follow_research',
        'approve_plan',
        'revise_plan',
        'answer_clarification',
        'steer_research',
        'get_report',
        'list_collections',
        'search_collection',
      ]),
    );
    const start = (await acme.callTool({
      name: 'start_research',
      arguments: { question: 'How much solar capacity does Germany have?', autoAcceptPlan: true, effort: 'quick' },
    })) as CallToolResult;
    expect(start.isError).toBeFalsy();
    const id = (start.structuredContent as { id: string }).id;
    expect(id).toMatch(/^research-/);

    const progress: string[] = [];
    expect(await followToEnd(acme, id, progress)).toBe('completed');
    expect(progress[0]).toMatch(/^started: How much solar/);
    expect(progress).toContainEqual(expect.stringMatching(/^report written: /));
    expect(progress.at(-1)).toBe('done: completed');
    // The report's draft came as progress while it was written, before the report was stored.
    const drafts = progress.filter((m) => m.startsWith('report as written: '));
    expect(drafts.join('').replaceAll('report as written: ', '')).toContain('Costs fell sharply [1].');
    expect(progress.findIndex((m) => m.startsWith('report as written: '))).toBeLessThan(
      progress.findIndex((m) => m.startsWith('report written: ')),
    );

    const md = (await acme.callTool({ name: 'get_report', arguments: { id } })) as CallToolResult;
    expect(textOf(md)).toMatch(/^# /);
    const js = (await acme.callTool({ name: 'get_report', arguments: { id, format: 'json' } })) as CallToolResult;
    const report = js.structuredContent as { markdown: string; references: { url: string }[] };
    expect(report.markdown).toBe(textOf(md));
    expect(report.references.length).toBeGreaterThan(0);
    expect(report.references[0]!.url).toContain(new URL(h.site.url).host);

    const listed = await acme.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`deep-research://research/${id}/report`);
    const resource = await acme.readResource({ uri: `deep-research://research/${id}/report` });
    expect(resource.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: textOf(md) });

    const globex = await httpClient(url, GLOBEX);
    const status = (await globex.callTool({ name: 'get_research', arguments: { id } })) as CallToolResult;
    expect(status.isError).toBe(true);
    expect(textOf(status)).toMatch(/\[404 /);
    await expect(globex.readResource({ uri: `deep-research://research/${id}/report` })).rejects.toThrow(/Resource not found/);
    expect((await globex.listResources()).resources.map((r) => r.uri)).not.toContain(`deep-research://research/${id}/report`);
    await Promise.all([acme.close(), globex.close()]);
  }, 180_000);

  it('answers a request without a key or with an unknown one 401, and a bad plan approval as a tool error', async () => {
    await expect(httpClient(url, undefined)).rejects.toThrow(/401|needs a key/);
    await expect(httpClient(url, 'not-a-key')).rejects.toThrow(/401|not known/);
    const acme = await httpClient(url, ACME);
    const r = (await acme.callTool({ name: 'approve_plan', arguments: { id: 'research-nope', planVersion: 1 } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^error: .*\[404 /);
    // An id of "." or ".." never reaches another route ("/v1/research/." would be the run list).
    for (const id of ['.', '..']) {
      for (const name of ['get_research', 'get_report', 'follow_research']) {
        const refused = (await acme.callTool({ name, arguments: { id } })) as CallToolResult;
        expect([name, id, refused.isError, textOf(refused)]).toEqual([name, id, true, expect.stringMatching(/not a run id/)]);
      }
    }
    // Nor does one given to the client itself (the CLI's and the tools' way to the API).
    const direct = createClient({ baseUrl: url, key: ACME });
    for (const id of ['.', '..', '']) await expect(direct.research.get(id)).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
    await acme.close();
  });

  it("searches a collection of the caller's by name or id; another tenant finds no such collection", async () => {
    const auth = (r: request.Test, key: string) => r.set('authorization', `Bearer ${key}`);
    const created = await auth(request(h.app).post('/v1/collections'), ACME).send({ name: 'Thermal' }).expect(201);
    const collection = created.body.id as string;
    const doc = await auth(request(h.app).post(`/v1/collections/${collection}/documents`), ACME)
      .attach('file', Buffer.from(TEXT_FIXTURE), { filename: 'notes.txt', contentType: 'text/plain' })
      .expect(202);
    for (let status = ''; status !== 'ready'; await new Promise((r) => setTimeout(r, 200))) {
      const res = await auth(request(h.app).get(`/v1/collections/${collection}/documents/${doc.body.id}`), ACME).expect(200);
      status = res.body.status;
      expect(status).not.toBe('failed');
    }
    const acme = await httpClient(url, ACME);
    for (const given of ['Thermal', collection]) {
      const r = (await acme.callTool({
        name: 'search_collection',
        arguments: { collection: given, query: 'molten salt heat' },
      })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toMatch(/\[1\] notes.*\n.*Molten salt keeps heat for ten hours/s);
      expect((r.structuredContent as { passages: { documentId: string }[] }).passages[0]!.documentId).toBe(doc.body.id);
    }
    const globex = await httpClient(url, GLOBEX);
    const byName = (await globex.callTool({
      name: 'search_collection',
      arguments: { collection: 'Thermal', query: 'salt' },
    })) as CallToolResult;
    expect(byName.isError).toBe(true);
    expect(textOf(byName)).toMatch(/no collection named "Thermal"/);
    const byId = (await globex.callTool({ name: 'search_collection', arguments: { collection, query: 'salt' } })) as CallToolResult;
    expect(byId.isError).toBe(true);
    expect(textOf(byId)).toMatch(/\[404 /);
    await Promise.all([acme.close(), globex.close()]);
  }, 60_000);

  it('serves the same tools on stdio from `deep-research mcp`, with the key decided by the API', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin', 'deep-research.mjs'), 'mcp', '--api', url],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DEEP_RESEARCH_KEY: GLOBEX },
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('follow_research');
    const list = (await client.callTool({ name: 'list_research', arguments: {} })) as CallToolResult;
    expect(list.isError).toBeFalsy();
    // globex started nothing: acme's run is not in its list.
    expect((list.structuredContent as { runs: unknown[] }).runs).toEqual([]);
    await client.close();
  }, 60_000);
});

describe.skipIf(!ready)(`MCP server on an open API (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await h?.close();
  });

  async function asTenant(tenant: string): Promise<Client> {
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/v1/mcp', url), { requestInit: { headers: { 'x-tenant-id': tenant } } }),
    );
    return client;
  }

  it('acts for X-Tenant-Id without a key, stops following at the plan review, and goes on after approve_plan', async () => {
    const ann = await asTenant('ann');
    const start = (await ann.callTool({
      name: 'start_research',
      arguments: { question: 'Which solar module is cheapest?' },
    })) as CallToolResult;
    const id = (start.structuredContent as { id: string }).id;
    const waiting = (await ann.callTool({ name: 'follow_research', arguments: { id, timeoutSeconds: 30 } }, undefined, {
      timeout: 40_000,
    })) as CallToolResult;
    const w = waiting.structuredContent as { stopped: string; lastEventId: number };
    expect(w.stopped).toBe('awaiting_input');
    expect(textOf(waiting)).toMatch(/plan v1: .*\n.*approve_plan/s);
    const view = (await ann.callTool({ name: 'get_research', arguments: { id } })) as CallToolResult;
    const plan = (view.structuredContent as { plan: { version: number; steps: { id: string }[] } }).plan;
    expect(plan.version).toBe(1);
    // The reviewer edits a step through revise_plan: refused with the reason when it names no step,
    // else a new version with the edit, for review again.
    const stepId = plan.steps[0]!.id;
    const wrong = (await ann.callTool({
      name: 'revise_plan',
      arguments: { id, planVersion: 1, edits: [{ kind: 'remove', stepId: 'nope' }] },
    })) as CallToolResult;
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/edits\.0: the plan has no step nope/);
    const revised = (await ann.callTool({
      name: 'revise_plan',
      arguments: { id, planVersion: 1, edits: [{ kind: 'setTitle', stepId, title: 'Module prices only' }] },
    })) as CallToolResult;
    expect(revised.structuredContent).toMatchObject({ decision: 'revising', nextPlanVersion: 2 });
    let planVersion = 1;
    for (const end = Date.now() + 20_000; planVersion < 2 && Date.now() < end;) {
      const again = (await ann.callTool({ name: 'get_research', arguments: { id } })) as CallToolResult;
      const p = again.structuredContent as { phase: string; plan: { version: number; steps: { title: string }[] } };
      if (p.phase === 'reviewing' && p.plan.version === 2) {
        expect(p.plan.steps[0]!.title).toBe('Module prices only');
        planVersion = 2;
      } else await new Promise((r) => setTimeout(r, 100));
    }
    expect(planVersion).toBe(2);
    // A follower sees the new version go to review (its plan, phase and status).
    const again = (await ann.callTool({ name: 'follow_research', arguments: { id, after: w.lastEventId, timeoutSeconds: 30 } }, undefined, {
      timeout: 40_000,
    })) as CallToolResult;
    const w2 = again.structuredContent as { stopped: string; lastEventId: number };
    expect(w2.stopped).toBe('awaiting_input');
    expect(textOf(again)).toMatch(/plan v2: .*Module prices only/);

    const bob = await asTenant('bob');
    const stranger = (await bob.callTool({ name: 'approve_plan', arguments: { id, planVersion } })) as CallToolResult;
    expect(stranger.isError).toBe(true);
    expect(textOf(stranger)).toMatch(/no research run with id .*\[404 not_found\]/);

    const approved = (await ann.callTool({ name: 'approve_plan', arguments: { id, planVersion } })) as CallToolResult;
    expect(approved.structuredContent).toMatchObject({ id, decision: 'approved' });
    expect(await followToEnd(ann, id, [], w2.lastEventId)).toBe('completed');
    await Promise.all([ann.close(), bob.close()]);
  }, 120_000);

  it('answers GET and DELETE /v1/mcp 405: the server is stateless', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(new URL('/v1/mcp', url), { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});
