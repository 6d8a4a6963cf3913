// The CLI at a real terminal (a tmux pseudo-terminal): `run` follows a run live, shows the plan,
// takes a revision with feedback typed at the prompt, then an approval, and writes the report to
// a file; `list` and `status` show the run.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { ROOT, spawnCli } from '../support/spawn';

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const hasTmux = (() => {
  try {
    tmux('-V');
    return true;
  } catch {
    return false;
  }
})();
const ready = Boolean(temporalAddress() && databaseUrl() && hasTmux);

describe.skipIf(!ready)(`the CLI at a terminal (${ready ? 'live' : hasTmux ? missingReason() : 'no tmux'})`, () => {
  let h: Harness;
  let server: http.Server;
  let api = '';
  const session = `dr-cli-${process.pid}`;
  // A tenant of its own: other files' runs on the shared server and database would otherwise fill
  // `list --limit 5` (seen on a loaded machine: this run was not among the five newest).
  const key = `cli-key-${process.pid}-0123456789abcdef`;
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${key}=cli-${process.pid}` } });
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // already gone
    }
    server?.closeAllConnections();
    server?.close();
    await h?.close();
  });

  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);
  async function until(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    for (const end = Date.now() + timeoutMs; ;) {
      const s = screen();
      if (pattern.test(s)) return s;
      if (Date.now() > end) throw new Error(`the terminal never showed ${pattern}:\n${s}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const type = (text: string) => {
    tmux('send-keys', '-t', session, '-l', text);
    tmux('send-keys', '-t', session, 'Enter');
  };

  it('runs a question: revise at the prompt, approve, report file; then list and status', async () => {
    h.llm.script(
      researchRules({ planner: (_req, n) => ({ json: n === 0 ? planJson([{ id: 'a' }, { id: 'b' }]) : planJson([{ id: 'c' }]) }) }),
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dr-cli-'));
    const out = path.join(dir, 'solar.md');
    const cmd = [
      `cd ${ROOT}`,
      `DEEP_RESEARCH_API=${api} DEEP_RESEARCH_KEY=${key} ${process.execPath} bin/deep-research.mjs run "How much cheaper has solar power become?" --out ${out}`,
      'echo EXIT=$?',
      'sleep 60',
    ].join('; ');
    tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', cmd);

    await until(/Approve plan v1 \(a\), revise it \(r\), edit a step \(e\) or cancel the run \(c\)\?/);
    const first = screen();
    expect(first).toMatch(/Research research-\S+ started\./);
    // The plan as the reviewer reads it: why, each step with what it will do, the brief's sources.
    expect(first).toMatch(
      /Plan v1: .*\n\s+Why: Find the figures, then compare them\.\n\s+1\. \[research\] a: Step a\n\s+Find facts for step a\n\s+2\. \[research\] b: Step b\n\s+Find facts for step b/,
    );
    expect(first).toMatch(/Background brief: .*\n\s+\[1\] .+ http:\/\/127\.0\.0\.1:\d+\//);
    type('r');
    await until(/Feedback for the planner:/);
    type('Only one step, please');
    await until(/Approve plan v2/);
    // A step edited at the prompt: the next version has it (no planner call).
    type('e');
    await until(/Which step \(its id\)\?/);
    type('c');
    await until(/Remove step c\? \(y\/N\)/);
    type('');
    await until(/New title \(Enter keeps it\):/);
    type('German module prices');
    await until(/What it should do \(Enter keeps it\):/);
    type('');
    await until(/Approve plan v3/);
    expect(screen()).toMatch(/Plan v3: .*\n(.*\n)*?\s+1\. \[research\] c: German module prices/);
    type('a');
    const end = await until(/EXIT=\d/, 60_000);
    expect(end).toMatch(/Plan v3 approved\./);
    // The report's draft was printed as it was written.
    expect(end).toMatch(/· the report, as the model writes it \(a draft: its citations are checked next\)\n## Key points/);
    expect(end).toMatch(/step c completed/);
    expect(end).toMatch(/c searched "/);
    expect(end).toMatch(/Report written to .*solar\.md/);
    expect(end).toMatch(/EXIT=0/);
    expect(existsSync(out)).toBe(true);
    expect(readFileSync(out, 'utf8')).toMatch(/^# /);
    const planner = h.llm.requests.filter((r) => r.rule === 'planner');
    expect(userText(planner[1]!.body)).toMatch(/Only one step, please/);

    const id = /Research (research-\S+) started\./.exec(end)![1]!;
    const cli = async (...args: string[]) => {
      const p = spawnCli(args, { DEEP_RESEARCH_API: api, DEEP_RESEARCH_KEY: key });
      const closed = new Promise((r) => p.child.once('close', r));
      const code = await p.exited(30_000);
      await closed;
      return { code, out: p.output() };
    };
    const status = await cli('status', id);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(new RegExp(`${id} · completed · phase done`));
    expect(status.out).toMatch(/Plan v3: .*\n\s+c\s+research\s+completed/);
    const list = await cli('list', '--limit', '5');
    expect(list.out).toMatch(new RegExp(`${id}\\s+completed\\s+done\\s+\\S+ \\S+\\s+How much cheaper has solar power become\\?`));
    const missing = await cli('status', 'research-does-not-exist');
    expect(missing).toMatchObject({
      code: 1,
      out: expect.stringMatching(/error: no research run with id research-does-not-exist \(404 not_found\)/),
    });
  }, 120_000);
});
