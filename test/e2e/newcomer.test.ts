// The newcomer's path, as README.md writes it, on a clean clone of this commit: `npm install`,
// `npm start`, `npm link`, the first-run curl commands (read from the README itself), the plan
// approved as the README says, the README's `deep-research run` with the review answered at its
// prompt (in a terminal: `script` gives it one), and one export of each format. Any error, warning or wrong turn a newcomer would
// meet fails it: an npm error or engine warning, a line logged at WARN or ERROR (but the one that
// says the keyless dev API is open to this machine), a Node warning, a command that fails.
//
// What differs from a newcomer's machine, and why: free ports instead of 3000, 7233, 8233 (the
// suite runs beside it; the README's commands are rewritten to the port, and the CLI reads it from
// API_PORT as it would from DEEP_RESEARCH_API); the scripted model and search servers of the suite
// (no internet here: OPENAI_BASE_URL and SEARXNG_URL as the README says, SEARCH_PROVIDERS=searxng
// so the keyless web providers are not tried; its hits are pages of the suite's fixture site, on
// loopback, which CRAWL_ALLOW_HOSTS lets the crawler read); the suite's Temporal CLI (TEMPORAL_CLI_PATH, the
// first place the README says it is looked for); npm told to prefer its cache, and `npm link` to
// link into a prefix of the test's own (on the PATH as a user's prefix would be), not this
// machine's Node.
// The transcript goes to .data/newcomer-transcript.md.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ScriptedLlmServer } from '../support/llm-server';
import { planJson, researchRules, searchResults } from '../support/research-script';
import { FixtureSite } from '../support/fixture-site';
import { FakeSearxng } from '../support/search-server';
import { missingReason } from '../support/services';
import { freePort, ROOT, watched, type Spawned } from '../support/spawn';

const cli = inject('temporalCliPath');
const QUESTION = 'How much cheaper has solar power become since 2010?';
/** The one warning a newcomer is meant to see: what an open API means. */
const EXPECTED_WARNINGS = [/the API runs without keys: anyone on this machine can use it/];

/** A command run to its end in a shell, as typed: its output, or a failure with it. */
function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): string {
  try {
    return execFileSync('bash', ['-c', command], { cwd, env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`\`${command}\` failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** A long-running command in its own process group, its output kept. */
function start(command: string, cwd: string, env: NodeJS.ProcessEnv, stdin: 'pipe' | 'ignore' = 'ignore'): Spawned {
  return watched(spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: [stdin, 'pipe', 'pipe'] }));
}

const stopGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
};

/** The shell commands of the README's section headed `heading`, in its `nth` sh block
 *  (continuation lines joined). */
function readmeCommands(readme: string, heading: string, nth = 0): string[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith(heading));
  if (!section) throw new Error(`README.md has no section "${heading}"`);
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)][nth]?.[1] ?? '';
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** Lines of the dev's log a newcomer would stumble on: warnings, errors, Node's own warnings. */
const wrongTurns = (output: string) =>
  output
    .split('\n')
    .filter((l) => /^\S+Z (WARN|ERROR) /.test(l) || /\(node:\d+\) \w*Warning/.test(l))
    .filter((l) => !EXPECTED_WARNINGS.some((r) => r.test(l)));

describe.skipIf(!cli)(`the README's path on a clean clone (${cli ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const site = new FixtureSite();
  let search: FakeSearxng | undefined;
  const transcript: string[] = [];
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  let apiPort = 0;
  let dev: Spawned | undefined;
  const said = (what: string, out: string) => transcript.push(`$ ${what}\n${out.trimEnd()}\n`);

  beforeAll(async () => {
    await llm.start();
    await site.start();
    search = await new FakeSearxng({}, searchResults(site.url)).start();
    llm.script(researchRules({}, planJson([{ id: 'a' }])));
    dir = mkdtempSync(path.join(os.tmpdir(), 'dr-newcomer-'));
    apiPort = await freePort();
    const prefix = path.join(dir, '..', `${path.basename(dir)}-prefix`);
    env = {
      PATH: `${path.join(prefix, 'bin')}:${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      npm_config_prefix: prefix,
      HOME: process.env.HOME ?? '/tmp',
      API_PORT: String(apiPort),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      PGLITE_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH: cli!,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-newcomer',
      SEARXNG_URL: search.url,
      SEARCH_PROVIDERS: 'searxng',
      CRAWL_ALLOW_HOSTS: new URL(site.url).host,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
  }, 60_000);

  afterAll(async () => {
    if (dev && dev.child.exitCode === null) stopGroup(dev.child, 'SIGKILL');
    await llm.close();
    await search?.close();
    await site.close();
    mkdirSync(path.join(ROOT, '.data'), { recursive: true });
    writeFileSync(path.join(ROOT, '.data', 'newcomer-transcript.md'), transcript.join('\n'));
    if (dir) for (const d of [dir, `${dir}-prefix`]) rmSync(d, { recursive: true, force: true });
  });

  it('installs, starts, runs the first-run commands, reviews at the CLI prompt and exports every format, with no wrong turn', async () => {
    const clone = `git clone --quiet ${ROOT} ${dir}`;
    said(clone, sh(clone, os.tmpdir(), env));
    // The clone's README: the commands of the commit under test.
    const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');

    // `npm install && npm start`, the README's first command, in two parts to watch each.
    const [install, startCommand] = readmeCommands(readme, 'Quick start')[0]!.split(' && ');
    expect([install, startCommand]).toEqual(['npm install', 'npm start']);
    const installed = sh(`${install} 2>&1`, dir, env, 300_000);
    said(install!, installed.split('\n').slice(-4).join('\n'));
    expect(installed).not.toMatch(/EBADENGINE|npm (error|warn)|ERR!/);

    // Once, for the command line on the PATH.
    const [link] = readmeCommands(readme, 'Quick start', 1);
    expect(link).toBe('npm link --ignore-scripts');
    const linked = sh(`${link} 2>&1`, dir, env, 120_000);
    said(link!, linked.trim());
    expect(linked).not.toMatch(/npm (error|warn)|ERR!|EBADENGINE/);
    expect(sh('command -v deep-research', dir, env).trim()).toBe(path.join(`${dir}-prefix`, 'bin', 'deep-research'));

    dev = start(startCommand!, dir, env);
    const banner = await dev.waitFor(/deep-research is running[\s\S]*?Temporal UI\s+\S+/, 240_000);
    said(startCommand!, banner[0]);
    // The banner the README shows, line for line (its ports ours).
    const shown = /prints where everything is:\n\n```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const lines = shown.replaceAll(':3000', `:${apiPort}`).replaceAll(':8233', `:${env.TEMPORAL_UI_PORT}`).split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(banner[0].split('\n')).toContain(line);

    // The first run, with the README's own curl commands.
    const [ask, read] = readmeCommands(readme, 'The first run').map((c) => c.replaceAll('localhost:3000', `localhost:${apiPort}`));
    const asked = sh(ask!, dir, env);
    said(ask!, asked);
    const { id, status } = JSON.parse(asked) as { id: string; status: string };
    expect([id, status]).toEqual([expect.stringMatching(/^research-/), 'running']);
    const readOne = read!.replace(/research-2f0c…/, id);
    expect(readOne).not.toBe(read);
    let view = JSON.parse(sh(readOne, dir, env)) as { status: string; phase: string; plan?: { version: number } };
    for (const end = Date.now() + 60_000; view.status !== 'awaiting_review';) {
      if (Date.now() > end) throw new Error(`the run never reached its review: ${JSON.stringify(view)}`);
      await new Promise((r) => setTimeout(r, 500));
      view = JSON.parse(sh(readOne, dir, env)) as typeof view;
    }
    said(readOne, `{"status":"${view.status}","phase":"${view.phase}",...}`);
    // "approve it with POST /v1/research/<id>/plan/approve and its planVersion"
    const approve = `curl -s localhost:${apiPort}/v1/research/${id}/plan/approve -H 'content-type: application/json' -d '{"planVersion": ${view.plan!.version}}'`;
    said(approve, sh(approve, dir, env));
    const report = `curl -s -o /dev/null -w '%{http_code}' localhost:${apiPort}/v1/research/${id}/report`;
    let code = '';
    for (const end = Date.now() + 90_000; code !== '200';) {
      if (Date.now() > end) throw new Error(`no report for ${id}: ${sh(readOne, dir, env)}`);
      await new Promise((r) => setTimeout(r, 1_000));
      code = sh(report, dir, env);
    }
    said(report, code);

    // The command line, as the README says, with the plan reviewed at its prompt in a terminal.
    const run = /\*\*the command line\*\*: `(deep-research run "[^"]+")`/.exec(readme)?.[1];
    expect(run).toBe(`deep-research run "${QUESTION}"`);
    const cliRun = start(`script -qefc '${run}' /dev/null`, dir, env, 'pipe');
    await cliRun.waitFor(/Approve plan v1 \(a\), revise it \(r\), edit a step \(e\) or cancel the run \(c\)\? /, 120_000);
    cliRun.child.stdin!.write('a\n');
    expect(await cliRun.exited(180_000)).toBe(0);
    // Without the terminal's control sequences (npx's spinner among them).
    const cliOut = stripVTControlCharacters(cliRun.output())
      .replace(/\r/g, '')
      .replace(/^[|/\\-]+(?=\S)/, '');
    said(`${run}   (answered "a" at the plan's prompt)`, cliOut.split('\n').slice(0, 40).join('\n'));
    const cliRunId = /Research (research-[\w-]+) started\./.exec(cliOut)?.[1];
    const written = /Report written to (\S+\/report-[\w-]+\.md)/.exec(cliOut)?.[1];
    expect([cliRunId, written], cliOut).toEqual([expect.any(String), expect.stringContaining(dir)]);
    expect(readFileSync(written!, 'utf8')).toMatch(/^# .+\n[\s\S]*## References/);

    // One export of each format.
    const magic: Record<string, RegExp> = {
      markdown: /^# /,
      json: /^\{"/,
      html: /^<!doctype html>/i,
      pdf: /^%PDF-/,
      docx: /^PK/,
      pptx: /^PK/,
    };
    for (const [format, start] of Object.entries(magic)) {
      const file = path.join(dir, `export.${format}`);
      const fetchIt = `curl -s -o ${file} -w '%{http_code} %{content_type}' 'localhost:${apiPort}/v1/research/${cliRunId!}/report?format=${format}'`;
      const got = sh(fetchIt, dir, env);
      said(fetchIt, got);
      expect(got, format).toMatch(/^200 /);
      expect(readFileSync(file).subarray(0, 32).toString('latin1'), format).toMatch(start);
    }
    // The report cites pages the run read (the fixture site's), none it has only a snippet of.
    const exported = JSON.parse(readFileSync(path.join(dir, 'export.json'), 'utf8')) as {
      references: { url: string; cited?: boolean; snippet?: boolean }[];
    };
    const cited = exported.references.filter((r) => r.cited);
    expect(cited.length, JSON.stringify(exported.references)).toBeGreaterThan(0);
    for (const r of cited) expect([r.url.startsWith(site.url), r.snippet]).toEqual([true, undefined]);

    // Ctrl-C stops everything in order.
    stopGroup(dev.child, 'SIGINT');
    await dev.exited(60_000);
    said('Ctrl-C', dev.output().split('\n').slice(-4).join('\n'));
    expect(dev.output()).toMatch(/SIGINT: shutting down/);
    expect(existsSync(path.join(dir, '.data', 'pglite'))).toBe(true);
    expect(wrongTurns(dev.output())).toEqual([]);
    expect(wrongTurns(cliOut)).toEqual([]);
  }, 600_000);
});
