// The researcher's python tool: a program the model writes runs in the coder's Docker sandbox
// (the same activity, on the sandbox queue) on data an earlier tool call read, and its output
// comes back as the tool result. Without a usable sandbox the tool is not offered.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepInput, StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { researchRules, userText, type RoleOverrides } from '../support/research-script';
import { NativeConnection } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { createWorker, type WorkerGroup } from '../../src/worker';
import { startHarness, testConfig, type Harness } from '../support/harness';
import { databaseUrl, dockerAvailable, missingReason, temporalAddress, workflowBundle } from '../support/services';
import { recordHistories } from '../support/record-history';

const servicesReady = Boolean(temporalAddress() && databaseUrl());
const sandboxReady = servicesReady && dockerAvailable();

const step = {
  id: 'grid',
  title: 'Plant capacity',
  description: 'How much capacity do the listed plants have in all?',
  type: 'research' as const,
  needSearch: true,
  dependsOn: [],
};

const toolMessages = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => String(m.content ?? ''));
const toolNames = (req: ChatRequest) => req.tools?.map((t) => t.function.name) ?? [];

async function runStep(h: Harness, overrides: RoleOverrides): Promise<{ id: string; out: StepOutput }> {
  h.llm.script(researchRules(overrides));
  const id = `researcher-python-${randomUUID()}`;
  const input: StepInput = {
    researchId: id,
    question: 'What capacity do the plants have?',
    locale: 'en-US',
    step,
    attempt: 1,
    feedback: '',
    dependencyKeys: [],
    maxToolRounds: 6,
  };
  const out = (await h.client.workflow.execute('researcherWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: id,
    args: [input],
  })) as StepOutput;
  return { id, out };
}

/** Sums the capacity column of /work/<source>.md (the CSV page's rows), and plots it. */
const PROGRAM = [
  'import glob, re',
  'import matplotlib.pyplot as plt',
  "[page] = glob.glob('/work/S*.md')",
  "caps = [int(x) for x in re.findall(r'capacity_mw: (\\d+)', open(page).read())]",
  "unit = open('unit.txt').read().strip()",
  "print(f'PLANTS={len(caps)} TOTAL={sum(caps)} {unit} MAX={max(caps)}')",
  "plt.bar(range(len(caps)), caps); plt.savefig('/output/capacity.png', dpi=60)",
].join('\n');

describe.skipIf(!sandboxReady)(`researcher python tool (${sandboxReady ? 'live' : missingReason() || 'Docker missing'})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { SANDBOX_TIMEOUT_S: '20' } });
  });
  afterAll(async () => h?.close());

  it('runs a program on a crawled CSV in the sandbox; its output reaches the model and the stored finding', async () => {
    // Figures nobody wrote down: only a program that really read the page can add them up.
    const plants = Array.from({ length: 6 }, (_, i) => ({ name: `Plant${randomUUID().slice(0, 8)}${i}`, mw: randomInt(100, 10_000) }));
    const total = plants.reduce((n, p) => n + p.mw, 0);
    const max = Math.max(...plants.map((p) => p.mw));
    h.site.route('/data/plants.csv', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      res.end(`plant,capacity_mw\n${plants.map((p) => `${p.name},${p.mw}`).join('\n')}\n`);
    });
    const csvUrl = `${h.site.url}/data/plants.csv`;
    let sourceId = '';
    const react = (req: ChatRequest): Reply => {
      const results = toolMessages(req);
      if (results.length === 0) return { toolCalls: [{ name: 'crawl', arguments: { urls: [csvUrl], goal: 'capacity of each plant' } }] };
      if (results.length === 1) {
        sourceId = /\[(S[0-9a-f]{8})\]/.exec(results[0]!)![1]!;
        // A program that fails, and one whose input names no source of the run: both are results.
        return {
          toolCalls: [
            { name: 'python', arguments: { code: 'print(1/0)' } },
            { name: 'python', arguments: { code: 'print(1)', files: ['S00000000'] } },
          ],
        };
      }
      if (results.length === 3) {
        return { toolCalls: [{ name: 'python', arguments: { code: PROGRAM, files: [sourceId], data: { 'unit.txt': 'MW' } } }] };
      }
      return { content: `The plants have ${/TOTAL=(\d+)/.exec(results.at(-1)!)?.[1] ?? '?'} MW in all [${sourceId}].` };
    };
    // The compressor writes down the figure the tool results hold, whatever it is.
    const researcher = (req: ChatRequest): Reply => ({
      json: { text: `Computed total: ${/TOTAL=(\d+)/.exec(userText(req))?.[1] ?? 'none'} MW [${sourceId}].`, summary: 'A total.' },
    });
    const { id, out } = await runStep(h, { react, researcher });

    const turns = h.llm.requests.filter((r) => r.rule === 'react');
    expect(turns).toHaveLength(4);
    // Offered with what it does and under which limits.
    expect(toolNames(turns[0]!.body)).toEqual(['web_search', 'crawl', 'python', 'think']);
    const python = turns[0]!.body.tools!.find((t) => t.function.name === 'python')!;
    expect(python.function.description).toMatch(/No network access/);
    expect(python.function.description).toMatch(/20 s wall-clock, 512 MB memory/);
    expect(python.function.description).toMatch(/written to \/work\/<id>\.md/);
    expect(python.function.description).toMatch(/last 4000 characters of stdout/);
    expect(python.function.parameters).toMatchObject({ required: ['code'], properties: { files: { type: 'array' } } });
    expect(String(turns[0]!.body.messages[0]!.content)).toMatch(/`python\(code, files, data\)`: runs a Python program in a sandbox/);

    // The failures came back as tool results the model could act on.
    const [divided, unknown] = toolMessages(turns[2]!.body).slice(1);
    expect(divided).toMatch(/^python: error: exit code 1: ZeroDivisionError: division by zero/);
    expect(divided).toMatch(/stderr:\nTraceback/);
    expect(unknown).toMatch(/^python: error: not run: no source S00000000 in this run/);

    // The program read the page's rows from the sandbox's /work and printed what it computed.
    const result = toolMessages(turns[3]!.body).at(-1)!;
    expect(result).toMatch(/^python: ok: ran in \d+ ms/);
    expect(result).toContain(`Input files in /work: ${sourceId}.md (plants [${sourceId}]), unit.txt`);
    expect(result).toContain(`stdout:\nPLANTS=6 TOTAL=${total} MW MAX=${max}`);
    expect(result).toMatch(/Files kept: capacity\.png \(image\/png, \d+ bytes\)/);

    // The finding keeps the computed figure, cites the CSV and shows the chart.
    const { rows: artifacts } = await h.pool.query('SELECT artifact_id, step_id, content_type FROM artifacts WHERE research_id = $1', [id]);
    expect(artifacts).toEqual([
      { artifact_id: expect.stringMatching(/^grid-1\d{5}-capacity\.png$/), step_id: 'grid', content_type: 'image/png' },
    ]);
    const doc = await h.pool.query('SELECT content, meta FROM documents WHERE research_id = $1 AND key = $2', [id, 'step/grid/1']);
    expect(doc.rows[0].content).toContain(`Computed total: ${total} MW [${sourceId}].`);
    expect(doc.rows[0].content).toContain(`![capacity.png](artifact:${artifacts[0].artifact_id})`);
    expect(doc.rows[0].meta.artifacts).toEqual([artifacts[0].artifact_id]);
    expect(out.sourceIds).toEqual([sourceId]);
    expect(out.notes).toBeUndefined();

    // Three runs of the coder's sandbox activity on the sandbox queue; each recorded once.
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const runs = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runCode');
    expect(runs).toHaveLength(3);
    for (const e of runs) expect(e.activityTaskScheduledEventAttributes!.taskQueue!.name).toBe(`${h.taskQueue}-sandbox`);
    const { rows } = await h.pool.query('SELECT status FROM sandbox_runs WHERE research_id = $1 ORDER BY attempt', [id]);
    expect(rows.map((r) => r.status)).toEqual(['error', 'error', 'ok']);
    // The page went to the sandbox from the store, never through the workflow history.
    expect(JSON.stringify(history)).not.toContain(plants[0]!.name);
    recordHistories([[id, 'researcher-python.json']]);
  });
});

describe.skipIf(!servicesReady)(`researcher without a sandbox (${servicesReady ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // No Docker engine behind the socket: the probe finds the sandbox unusable.
    h = await startHarness({ env: { DOCKER_SOCKET: '/nonexistent/docker.sock' } });
  });
  afterAll(async () => h?.close());

  it('is not offered python, and a call to it anyway is sent back for repair', async () => {
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'user' && String(m.content).includes('python is not a tool of this step'))
        ? { content: 'Answered without a program.' }
        : { toolCalls: [{ name: 'python', arguments: { code: 'print(2 + 2)' } }] };
    const { id, out } = await runStep(h, { react });
    const turns = h.llm.requests.filter((r) => r.rule === 'react');
    expect(toolNames(turns[0]!.body)).toEqual(['web_search', 'crawl', 'think']);
    expect(String(turns[0]!.body.messages[0]!.content)).not.toMatch(/python/);
    // The call is sent back for repair; the answer that follows searched nothing, so code searches
    // for the step before the model answers again.
    expect(String(turns[1]!.body.messages.at(-1)!.content)).toMatch(/python is not a tool of this step/);
    expect(out.key).toBe('step/grid/1');
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    expect(history.events!.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runCode')).toBe(false);
  });
});

describe.skipIf(!sandboxReady)(
  `a worker without Docker beside one with it (${sandboxReady ? 'live' : missingReason() || 'Docker missing'})`,
  () => {
    let h: Harness;
    let docker: { group: WorkerGroup; running: Promise<void>; connection: NativeConnection };
    beforeAll(async () => {
      // The harness's worker has no Docker engine; the operator says the sandbox queue's workers do.
      h = await startHarness({ env: { DOCKER_SOCKET: '/nonexistent/docker.sock', RESEARCHER_PYTHON: 'true' } });
      const connection = await NativeConnection.connect({ address: temporalAddress()! });
      const config = { ...h.config, sandbox: { ...h.config.sandbox, dockerSocket: testConfig(undefined).sandbox.dockerSocket } };
      const group = await createWorker({
        config,
        connection,
        pool: h.pool,
        taskQueue: h.taskQueue,
        workflowBundle: workflowBundle(),
        identity: 'docker-host',
      });
      docker = { group, running: group.run(), connection };
    });
    afterAll(async () => {
      docker?.group.shutdown();
      await docker?.running;
      await docker?.connection.close();
      await h?.close();
    });

    it('leaves the sandbox queue to the worker with Docker: every program runs there at its first attempt', async () => {
      // Only the worker with Docker polls the sandbox queue (the other checks its engine and stays off it).
      const pollers = async () =>
        (
          await h.client.workflowService.describeTaskQueue({
            namespace: 'default',
            taskQueue: { name: `${h.taskQueue}-sandbox` },
            taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
          })
        ).pollers?.map((p) => p.identity) ?? [];
      await expect.poll(pollers, { timeout: 10_000 }).toEqual(['docker-host-sandbox']);
      const react = (req: ChatRequest): Reply => {
        const done = toolMessages(req).length;
        if (done < 3) return { toolCalls: [{ name: 'python', arguments: { code: `print(${done} * 7)` } }] };
        return {
          content: `The programs printed ${toolMessages(req)
            .map((m) => /stdout:\n(\d+)/.exec(m)?.[1])
            .join(', ')}.`,
        };
      };
      const { id } = await runStep(h, { react });
      const results = toolMessages(h.llm.requests.filter((r) => r.rule === 'react').at(-1)!.body);
      expect(results.map((m) => /stdout:\n(\d+)/.exec(m)?.[1])).toEqual(['0', '7', '14']);
      const history = await h.client.workflow.getHandle(id).fetchHistory();
      const scheduled = new Set(
        history
          .events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runCode')
          .map((e) => String(e.eventId)),
      );
      const started = history.events!.flatMap((e) => {
        const a = e.activityTaskStartedEventAttributes;
        return a && scheduled.has(String(a.scheduledEventId)) ? [{ identity: a.identity, attempt: a.attempt }] : [];
      });
      expect(started).toEqual(Array.from({ length: 3 }, () => ({ identity: 'docker-host-sandbox', attempt: 1 })));
    });
  },
);
