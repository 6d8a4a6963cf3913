// The last-resort handlers of dev, worker and api: an exception nothing caught and a rejection
// nothing handled are logged and counted, and the process goes on (in `dev`, one process serves
// the API, the worker and the database of every tenant).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const PROBE = `
import { installLastResortHandlers } from ${JSON.stringify(path.resolve('src/infra/last-resort.ts'))};
import { createLogger } from ${JSON.stringify(path.resolve('src/infra/logger.ts'))};
import { metricsText } from ${JSON.stringify(path.resolve('src/infra/metrics.ts'))};
installLastResortHandlers(createLogger('info'));
setTimeout(() => { throw new Error('thrown in a timer'); }, 10);
setTimeout(() => void Promise.reject(new Error('rejected, never handled')), 20);
setTimeout(async () => {
  const text = await metricsText();
  console.log(text.split('\\n').filter((l) => l.startsWith('deep_research_uncaught_errors_total')).join('\\n'));
  console.log('still serving');
}, 200);
`;

describe('last-resort handlers', () => {
  it('log an uncaught exception and an unhandled rejection, count them, and keep the process running', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx/esm', '--input-type=module', '-e', PROBE], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stdout).toMatch(/still serving/);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/an uncaught exception \(a bug\)[\s\S]*thrown in a timer/);
    expect(run.stderr).toMatch(/an unhandled promise rejection \(a bug\)[\s\S]*rejected, never handled/);
    expect(run.stdout).toMatch(/deep_research_uncaught_errors_total\{kind="uncaught_exception"\} 1/);
    expect(run.stdout).toMatch(/deep_research_uncaught_errors_total\{kind="unhandled_rejection"\} 1/);
  });
});
