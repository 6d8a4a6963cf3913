// `deep-research dev` as a newcomer runs it: the whole stack on embedded defaults, a research run
// through its API, Ctrl-C, and a restart that finishes the run that was in flight.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlmServer } from '../support/llm-server';
import { researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { missingReason } from '../support/services';
import { inject } from 'vitest';
import { devEnv } from '../support/dev-env';
import { portIsFree, spawnCli, type Spawned } from '../support/spawn';

const cli = inject('temporalCliPath');

async function getJson(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.skipIf(!cli)(`deep-research dev (${cli ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  let env: Record<string, string>;
  let ports: number[];
  let dev: Spawned | undefined;

  beforeAll(async () => {
    await llm.start();
    await search.start();
    ({ env, ports } = await devEnv({ cli: cli!, llmUrl: llm.url, searchUrl: search.url }));
  });
  afterAll(async () => {
    dev?.child.kill('SIGKILL');
    await llm.close();
    await search.close();
  });

  // One dev's whole life, so it starts three times and not four: each start costs seconds.
  it('starts everything, runs a question, stops on SIGINT and resumes the run after a restart; survives its own kill -9: a second dev on the data directory refuses, a restart stops the orphan and resumes', async () => {
    dev = spawnCli(['dev'], env);
    const api = (await dev.waitFor(/API\s+(http:\/\/\S+)/, 90_000))[1]!;
    const ui = (await dev.waitFor(/Temporal UI\s+(http:\/\/\S+)/, 1_000))[1]!;
    expect(ui).toBe(`http://127.0.0.1:${env.TEMPORAL_UI_PORT}`);
    expect((await getJson(`${api}/healthz`)).status).toBe(200);
    expect(await getJson(`${api}/readyz`)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { temporal: { ok: true }, postgres: { ok: true } } },
    });
    expect((await fetch(ui)).status).toBe(200);

    // The coordinator answers slowly, so the run is in flight when we press Ctrl-C.
    llm.script(
      researchRules({
        coordinator: {
          json: { action: 'research', locale: 'en-US', directAnswer: null, researchTopic: 'Resumed topic', clarificationQuestion: null },
          delayMs: 1_500,
        },
      }),
    );
    const started = await fetch(`${api}/v1/research`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What survives a restart?', options: { autoAcceptPlan: true } }),
    });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 50));
    dev.child.kill('SIGINT');
    expect(await dev.exited(30_000)).toBe(0);
    for (const p of ports) expect(await portIsFree(p)).toBe(true);
    // One log format, the SDK's lines included; its expected notices about the activity-only task
    // queues ("No workflows registered, not polling…") are not shown.
    expect(dev.output()).not.toMatch(/not polling for|^\S+Z \[(TRACE|DEBUG|INFO|WARN|ERROR)\] /m);

    dev = spawnCli(['dev'], env);
    await dev.waitFor(/deep-research is running/, 90_000);
    let view: Record<string, unknown> = {};
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      view = (await getJson(`${api}/v1/research/${id}`)).body;
      if (view.status === 'completed' || view.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(view).toMatchObject({ id, status: 'completed', phase: 'done', question: 'What survives a restart?' });
    // The coordinator call that finished during the drain was not made again after the restart.
    const coordinatorCalls = llm.completed().filter((r) => r.rule === 'coordinator');
    expect(coordinatorCalls).toHaveLength(1);
    expect(search.queries).toEqual(expect.arrayContaining(['solar cost', 'Step a']));

    // The restarted dev survives its own kill -9: a second dev on the data directory refuses, a
    // restart stops the orphan and resumes. (One dev per data directory.)
    const second = spawnCli(['dev'], env);
    expect(await second.exited(60_000)).toBe(1);
    expect(second.output()).toMatch(new RegExp(`another \`deep-research dev\` \\(pid ${dev.child.pid}\\) is using the data directory`));

    llm.script(
      researchRules({
        coordinator: {
          json: { action: 'research', locale: 'en-US', directAnswer: null, researchTopic: 'Killed topic', clarificationQuestion: null },
          delayMs: 1_500,
        },
      }),
    );
    const killed = await fetch(`${api}/v1/research`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What survives kill -9?', options: { autoAcceptPlan: true } }),
    });
    expect(killed.status).toBe(202);
    const killedId = ((await killed.json()) as { id: string }).id;
    while (!llm.requests.some((r) => r.rule === 'coordinator')) await new Promise((r) => setTimeout(r, 50));
    dev.child.kill('SIGKILL');
    await dev.exited(10_000);
    // The Temporal dev server runs on, in a process group of its own.
    expect(await portIsFree(Number(env.TEMPORAL_PORT))).toBe(false);

    dev = spawnCli(['dev'], env);
    await dev.waitFor(/deep-research is running/, 90_000);
    expect(dev.output()).toMatch(/stopping the Temporal dev server \(pid \d+\) that a killed `deep-research dev` left running/);
    for (const end = Date.now() + 60_000; Date.now() < end;) {
      view = (await getJson(`${api}/v1/research/${killedId}`)).body;
      if (view.status === 'completed' || view.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(view).toMatchObject({ id: killedId, status: 'completed', phase: 'done' });
    // The coordinator call cut by the kill was never completed, so it is the only one made again.
    expect(llm.completed().filter((r) => r.rule === 'coordinator')).toHaveLength(1);

    dev.child.kill('SIGINT');
    expect(await dev.exited(30_000)).toBe(0);
    for (const p of ports) expect(await portIsFree(p)).toBe(true);
  }, 360_000);

  it('stops with the reason when its API port is taken, before it starts anything, and leaves nothing running', async () => {
    // The port is looked at before the Temporal server, the database and the workflow bundle start,
    // so the refusal does not wait for them (on a loaded machine they take a minute). The API's own
    // bind, last, says the same if the port is taken in between (test/api/auth.test.ts).
    const api = Number(env.API_PORT);
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(api, '127.0.0.1', resolve));
    try {
      const taken = spawnCli(['dev'], { ...env, LOG_LEVEL: 'info' });
      expect(await taken.exited(90_000)).toBe(1);
      expect(taken.output()).toMatch(new RegExp(`port ${api} on 127\\.0\\.0\\.1 is already in use \\(the HTTP API; set API_PORT`));
      // At level info a start says when it starts the Temporal server and the workers: neither began.
      expect(taken.output()).toMatch(/ERROR port/);
      expect(taken.output()).not.toMatch(/starting Temporal dev server|Worker state changed|database migrated/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    for (const p of ports) expect(await portIsFree(p)).toBe(true);
  }, 120_000);

  it('stops with the variable name when the configuration is wrong', async () => {
    const bad = spawnCli(['dev'], { ...env, API_PORT: 'not-a-port' });
    expect(await bad.exited(60_000)).toBe(2);
    expect(bad.output()).toMatch(/API_PORT: /);
  });
});
