// A vitest reporter for scripts/run-tests.mjs: writes, as JSON, the errors that belong to a file or
// a describe block rather than to a test (a beforeAll or afterAll that threw or timed out, a file
// that did not load), and the run's unhandled errors. vitest's JSON report marks such a file failed
// but keeps no message, so a CI log that shows only its tail said "no message". The file to write
// comes in SUITE_ERRORS_FILE; without it the reporter does nothing. For a failed test it also keeps
// what the JSON report drops: the assertion's diff (the value the test got, not "{ …(4) }") and the
// line of the test file it failed at, so the summary a CI log ends with says what happened.
import { writeFileSync } from 'node:fs';

const text = (e) => (e?.stack || e?.message || String(e)).slice(0, 4000);

export default class SuiteErrors {
  onTestRunEnd(testModules, unhandledErrors) {
    const out = process.env.SUITE_ERRORS_FILE;
    if (!out) return;
    const errors = [];
    for (const m of testModules) {
      for (const e of m.errors()) errors.push({ file: m.moduleId, where: 'file', error: text(e) });
      for (const s of m.children.allSuites())
        for (const e of s.errors()) errors.push({ file: m.moduleId, where: s.fullName, error: text(e) });
    }
    for (const m of testModules) {
      for (const t of m.children.allTests('failed')) {
        const e = t.result().errors?.[0];
        if (!e) continue;
        const at = /\(?([^()\s]+\.test\.ts:\d+):\d+\)?/.exec(e.stack ?? '')?.[1];
        errors.push({ file: m.moduleId, where: 'test', test: t.name, error: text(e), diff: e.diff?.slice(0, 4000), at });
      }
    }
    for (const e of unhandledErrors) errors.push({ file: null, where: 'unhandled', error: text(e) });
    writeFileSync(out, JSON.stringify(errors, null, 2));
  }
}
