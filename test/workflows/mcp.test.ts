// MCP: a tool from a tiny stdio MCP server, discovered when a step starts and called by the
// researcher as an activity.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../../src/activities/mcp';
import type { StepInput, StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { ROOT } from '../support/spawn';

const ready = Boolean(temporalAddress() && databaseUrl());

function writeConfig(servers: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcp-')), 'mcp.json');
  writeFileSync(file, JSON.stringify({ servers }));
  return file;
}

const energy = {
  command: process.execPath,
  args: [path.join(ROOT, 'bin', 'run-ts.mjs'), path.join(ROOT, 'test', 'support', 'mcp-server.ts')],
  cwd: ROOT,
  roles: ['researcher'],
};

describe('MCP configuration', () => {
  it('names what is wrong with a config file', () => {
    expect(() => loadMcpConfig('/nonexistent/mcp.json')).toThrow(/MCP_CONFIG=\/nonexistent\/mcp.json cannot be read as JSON/);
    expect(() => loadMcpConfig(writeConfig({ 'bad name!': { command: 'x' } }))).toThrow(/servers\.bad name!: Invalid key/);
    expect(loadMcpConfig(undefined)).toEqual({ servers: {} });
  });
});

describe.skipIf(!ready)(`MCP tools in the researcher (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      env: {
        // The tool list below is the web and MCP; python has its own tests.
        RESEARCHER_PYTHON: 'false',
        MCP_CONFIG: writeConfig({
          energy,
          broken: { command: '/nonexistent/mcp-server', roles: ['researcher'] },
          coderonly: { ...energy, roles: ['coder'] },
        }),
      },
    });
  });
  afterAll(async () => h?.close());

  it('discovers the server tools at step start and calls one as an activity', async () => {
    const react = (req: ChatRequest): Reply => {
      const tools = req.messages.filter((m) => m.role === 'tool');
      if (tools.length === 0) return { toolCalls: [{ name: 'mcp__energy__lookup_capacity', arguments: { country: 'Germany' } }] };
      return { content: 'done' };
    };
    h.llm.script(researchRules({ react }));
    const id = `mcp-${randomUUID()}`;
    const input: StepInput = {
      researchId: id,
      question: 'How much solar does Germany have?',
      locale: 'en-US',
      step: {
        id: 'cap',
        title: 'Installed capacity',
        description: 'Find installed solar capacity',
        type: 'research',
        needSearch: true,
        dependsOn: [],
      },
      attempt: 1,
      feedback: '',
      dependencyKeys: [],
    };
    const out = (await h.client.workflow.execute('researcherWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [input],
    })) as StepOutput;
    const turns = h.llm.requests.filter((r) => r.rule === 'react');
    const offered = turns[0]!.body.tools!.map((t) => t.function.name);
    expect(offered).toEqual(['web_search', 'crawl', 'think', 'mcp__energy__lookup_capacity']);
    expect(turns[0]!.body.tools![3]!.function.description).toBe('[energy] Installed solar capacity of a country, in GW');
    const toolMsg = turns[1]!.body.messages.find((m) => m.role === 'tool')!;
    expect(toolMsg.content).toBe('Germany: 82 GW of solar installed (fixture data, 2023).');
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    // The first model turn discovers the tools (no local activity, no task of its own) and
    // returns them for the turns after it.
    const decode = (p: { data?: Uint8Array | null } | undefined) => JSON.parse(Buffer.from(p!.data!).toString()) as unknown;
    const markers = history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(markers).toHaveLength(0);
    const names = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(names).not.toContain('discoverMcpTools');
    expect(names).toContain('callMcpTool');
    const firstTurn = history.events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'researcherTurn')!;
    const firstResult = history.events!.find(
      (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(firstTurn.eventId),
    )!;
    const { mcp: discovered } = decode(firstResult.activityTaskCompletedEventAttributes!.result!.payloads![0]) as {
      mcp: { tools: { server: string }[]; errors: string[] };
    };
    // The broken server was reported, not fatal; the coder-only server was not offered.
    expect(discovered.tools.map((t) => t.server)).toEqual(['energy']);
    expect(discovered.errors).toHaveLength(1);
    expect(discovered.errors[0]).toMatch(/^broken: MCP server broken did not start or answer/);
    // Later turns are offered the same tools without asking the servers again.
    expect(turns[1]!.body.tools!.map((t) => t.function.name)).toEqual(offered);
    // ... and the step's result says so, for the run's notes and the report.
    expect(out.notes).toEqual([expect.stringMatching(/^MCP discovery failed: broken: MCP server broken did not start or answer/)]);
  });
});
