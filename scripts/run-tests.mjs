#!/usr/bin/env node
// Runs vitest, then prints one plain closing line, "N passed, N failed, N skipped". Under CI=true
// a skipped test fails the run: every test must have found the services it needs.
//
// The real-model tests (test/e2e/real-model.test.ts: a llama-server on this machine's CPU) run
// after the rest, alone. Arguments (file filters) go to every run; a run whose filters match none
// of its files is not started.
//
// The OpenAPI fuzzer (test/api/openapi-fuzz.test.ts: schemathesis against a live API, a time-boxed
// few minutes) runs after the suite, beside the real-model pass; beside the suite run a few tests again with TEST_TEMPORAL=server: on the
// real Temporal server on PostgreSQL (scripts/temporal-server.ts) instead of the dev server (the
// run list and its search attributes, status reads (the visibility query of runs closed lately),
// schedules, priority and fairness, the review by update), with the files that start that server
// themselves; that pass first waits for the server's build (.ci/run starts it in the background).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const REAL_MODEL = 'test/e2e/real-model.test.ts';
// Records the errors of hooks and files, which vitest's JSON report leaves out.
const SUITE_ERRORS_REPORTER = './scripts/vitest-suite-errors.mjs';
const FUZZ = 'test/api/openapi-fuzz.test.ts';
const args = process.argv.slice(2);
// Options (with the value of those that take one) go to every run; the rest are file filters.
const flags = [];
const filters = [];
for (let i = 0; i < args.length; i++) {
  if (!args[i].startsWith('-')) filters.push(args[i]);
  else flags.push(args[i], ...(/^(-t|--testNamePattern|--project)$/.test(args[i]) && i + 1 < args.length ? [args[++i]] : []));
}
const wantsReal = filters.length === 0 || filters.some((f) => REAL_MODEL.includes(f));
const wantsFuzz = filters.length === 0 || filters.some((f) => FUZZ.includes(f));
// The files that start the built Temporal server themselves run in the real-server pass too, after
// the suite: .ci/run builds the server in the background while the suite runs.
const BUILT_SERVER = ['test/e2e/temporal-server.test.ts', 'test/e2e/production-shape.test.ts', 'test/e2e/temporal-tls.test.ts'];
// Fairness is about Temporal's fairness keys, which the real server (the production shape) has:
// it runs in the real-server pass only, not again on the dev server in the suite.
const SERVER_ONLY = [...BUILT_SERVER, 'test/workflows/fairness.test.ts'];
const wantsRest =
  filters.length === 0 ||
  filters.some((f) => !f.includes('real-model') && !FUZZ.includes(f) && !SERVER_ONLY.some((file) => file.includes(f)));
// One vitest run (one server of its global setup, one bundle): a test that should run here too is
// a file of its own, not a -t filter, which would take a second run.
const REAL_SERVER = [
  ...SERVER_ONLY,
  'test/api/list.test.ts',
  'test/api/status-reads.test.ts',
  'test/workflows/schedules.test.ts',
  'test/workflows/review-update.test.ts',
].filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

/** One vitest run. `quiet`: its output goes to .data/test-output-<name>.log and is printed when it
 *  ends (for a run beside another, so their lines do not interleave). */
async function vitest(name, extra, env = process.env, quiet = false) {
  const out = path.resolve('.data', `test-results-${name}.json`);
  const suiteErrorsFile = path.resolve('.data', `test-suite-errors-${name}.json`);
  const logFile = path.resolve('.data', `test-output-${name}.log`);
  mkdirSync(path.dirname(out), { recursive: true });
  rmSync(out, { force: true });
  rmSync(suiteErrorsFile, { force: true });
  const logFd = quiet ? openSync(logFile, 'w') : undefined;
  const child = spawn(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      '--reporter=default',
      '--reporter=json',
      `--reporter=${SUITE_ERRORS_REPORTER}`,
      `--outputFile.json=${out}`,
      ...extra,
    ],
    {
      stdio: logFd === undefined ? 'inherit' : ['ignore', logFd, logFd],
      env: { ...env, SUITE_ERRORS_FILE: suiteErrorsFile },
    },
  );
  const r = { status: await new Promise((resolve) => child.once('close', (code) => resolve(code))) };
  if (logFd !== undefined) closeSync(logFd);
  let res;
  try {
    res = JSON.parse(readFileSync(out, 'utf8'));
  } catch (err) {
    console.error(`no test results from the ${name} run (${err.message})`);
  }
  let suiteErrors = [];
  try {
    suiteErrors = JSON.parse(readFileSync(suiteErrorsFile, 'utf8'));
  } catch (err) {
    if (res) console.error(`no file or hook errors recorded by the ${name} run (${err.message})`);
  }
  const log = quiet ? `\n--- the ${name} run's output (${logFile}):\n${readFileSync(logFile, 'utf8')}` : undefined;
  return { name, status: r.status ?? 1, res, suiteErrors, log };
}

const runs = [];
const timed = async (what, run) => {
  const started = Date.now();
  const result = await run();
  console.log(`${what} took ${Math.round((Date.now() - started) / 1000)} s`);
  return result;
};
/** A child process's exit code, its output shown as it comes. */
const exitOf = (args) =>
  new Promise((resolve) => spawn(process.execPath, args, { stdio: 'inherit' }).once('close', (code) => resolve(code)));
// The suite and the real-server pass go side by side: the suite alone keeps the two cores about
// three-quarters busy (its files wait on timers and servers), the other about half. The quiet
// passes print their output at the end, so that their lines do not interleave with the live one's.
// The real-model pass comes after the suite and never beside the real-server pass (with the model's
// server ahead of it, see test/support/real-llm.ts, timing tests of the real-server pass failed);
// the fuzz pass runs beside it.
// The files of the other passes are left out through the config (vitest.config.ts, SUITE_EXCLUDE).
const suite = wantsRest
  ? vitest('suite', args, { ...process.env, SUITE_EXCLUDE: [REAL_MODEL, FUZZ, ...SERVER_ONLY].join(',') })
  : undefined;
// The fuzz pass waits for the suite: beside it, it took the core the suite's files needed; after it,
// it runs beside the real-model pass, whose server writes with one thread.
const fuzz = wantsFuzz
  ? (async () => {
      await suite;
      return timed('the OpenAPI fuzz pass', () => vitest('fuzz', [FUZZ, ...flags], process.env, true));
    })()
  : undefined;
const realModel = () => timed('the real-model pass', () => vitest('real-model', ['--maxWorkers=1', REAL_MODEL, ...flags]));
// On a fresh machine the Temporal server's build (nice 19, started by .ci/run) outlasts the suite.
// The real-model pass then goes first: the model writes with one thread of the two cores (see
// scripts/local-llm.ts), and the build takes the other; the real-server pass follows it, never
// beside it. Warm, the server is there from the start and its pass runs beside the suite.
let built = false;
let modelFirst;
const serverBuild = REAL_SERVER.length
  ? (async () => {
      // Waits for the build .ci/run started in the background (or builds it now, when nothing did).
      const started = Date.now();
      const status = await exitOf(['bin/run-ts.mjs', 'scripts/temporal-server.ts', '--install-only']);
      built = true;
      console.log(`the Temporal server was ready after ${Math.round((Date.now() - started) / 1000)} s (exit ${status})`);
    })()
  : undefined;
const realServer = serverBuild
  ? (async () => {
      await serverBuild;
      if (modelFirst) runs.push(await modelFirst);
      return timed('the real-server pass', () =>
        vitest('real-server', [...REAL_SERVER, ...flags], { ...process.env, TEST_TEMPORAL: 'server' }, true),
      );
    })()
  : undefined;
if (suite) runs.push(await suite);
if (wantsReal && serverBuild && !built) {
  console.log('the Temporal server is not ready yet: the real-model pass goes first');
  modelFirst = realModel();
}
// Otherwise the real-model pass follows the real-server pass (never beside it), beside the fuzz pass.
const modelLast = wantsReal && !modelFirst ? (async () => (await realServer, realModel()))() : undefined;
const passes = await Promise.all([realServer, fuzz, modelLast].filter(Boolean));
runs.push(...passes);
// The quiet passes' output, once the live one is done.
for (const r of passes) if (r.log) console.log(r.log);

let code = runs.some((r) => r.status !== 0 || !r.res) ? 1 : 0;
const sum = (key) => runs.reduce((n, r) => n + (r.res?.[key] ?? 0), 0);
const skipped = sum('numPendingTests') + sum('numTodoTests');
// The failures again, last: CI may keep only the tail of what was printed.
const failures = runs.flatMap((r) =>
  (r.res?.testResults ?? []).flatMap((file) => {
    const where = path.relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    if (!failed.length && file.status === 'failed') {
      // A hook or the file itself failed: say which, with the first lines of its stack.
      const own = r.suiteErrors.filter((e) => e.file === file.name && e.where !== 'test');
      if (!own.length) return [`${where}: ${firstLines(file.message || undefined, 1)}`];
      return own.map((e) => `${where} (${e.where}): ${firstLines(e.error, 4)}`);
    }
    return failed.map((t) => {
      const more = r.suiteErrors.find((e) => e.file === file.name && e.where === 'test' && e.test === t.title);
      const at = more?.at ? ` (at ${path.basename(more.at)})` : '';
      const diff = more?.diff ? `\n${indented(more.diff, 16)}` : '';
      return `${where} > ${t.fullName}: ${firstLines(t.failureMessages?.[0], 1)}${at}${diff}`;
    });
  }),
);
for (const r of runs) for (const e of r.suiteErrors.filter((x) => x.file === null)) failures.push(`unhandled: ${firstLines(e.error, 4)}`);
/** The first `n` lines of a diff, indented under its failure. */
function indented(text, n) {
  const lines = stripVTControlCharacters(text).split('\n');
  const shown = lines.slice(0, n).map((l) => `      ${l}`);
  if (lines.length > n) shown.push(`      … ${lines.length - n} more line(s)`);
  return shown.join('\n');
}
function firstLines(text, n) {
  const lines = stripVTControlCharacters(text ?? 'no message')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, n);
  return lines.length ? lines.map((l) => l.trim()).join(' | ') : 'no message';
}
// Where the time went: the slowest files of every pass (CI prints this with its step table).
const fileTimes = runs
  .flatMap((r) =>
    (r.res?.testResults ?? []).map((file) => ({
      where: `${path.relative(process.cwd(), file.name)}${r.name === 'suite' ? '' : ` (${r.name})`}`,
      seconds: Math.max(0, ((file.endTime ?? 0) - (file.startTime ?? 0)) / 1000),
    })),
  )
  .sort((a, b) => b.seconds - a.seconds);
if (fileTimes.length) {
  console.log('\nslowest test files:');
  for (const f of fileTimes.slice(0, 15)) console.log(`  ${f.seconds.toFixed(0).padStart(5)} s  ${f.where}`);
}
// Every test by name, one a line (file > full name), for comparing what a change to the suite keeps.
const inventory = runs
  .flatMap((r) =>
    (r.res?.testResults ?? []).flatMap((file) =>
      (file.assertionResults ?? []).map(
        (t) => `${path.relative(process.cwd(), file.name)}${r.name === 'suite' ? '' : ` (${r.name})`} > ${t.fullName}`,
      ),
    ),
  )
  .sort();
if (inventory.length) writeFileSync(path.resolve('.data', 'test-inventory.txt'), `${inventory.join('\n')}\n`);

/** A failure's first line, cut at 600 characters, and the diff lines under it. */
const shown = (failure) => {
  const [head, ...diff] = failure.split('\n');
  return [`  ${head.slice(0, 600)}`, ...diff].join('\n');
};
if (failures.length) console.log(`\nfailed:\n${failures.map(shown).join('\n')}`);
console.log(`\n${sum('numPassedTests')} passed, ${sum('numFailedTests')} failed, ${skipped} skipped`);
if (process.env.CI === 'true' && skipped > 0) {
  console.error(`CI=true: ${skipped} test(s) skipped; under CI every test must run`);
  code = code || 1;
}
if (sum('numTotalTests') === 0) {
  console.error('no tests ran');
  code = code || 1;
}
process.exit(code);
