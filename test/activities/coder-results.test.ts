// A processing step's findings activity (finishCoderStep) against PostgreSQL and the scripted
// model: asked to, it judges the findings it wrote, by the judge's own code (the run then asks no
// judge of its own); not when the user asked the run to wrap up, nor when not asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxResult } from '../../src/activities/sandbox';
import { bySchema } from '../support/llm-server';
import { databaseUrl, missingReason } from '../support/services';
import { attemptOf, WebParts } from '../support/web-parts';

const ready = Boolean(databaseUrl());

const RUN: SandboxResult = {
  status: 'ok',
  exitCode: 0,
  stdout: '| year | usd/kWh |\n| 2010 | 0.445 |',
  stderr: '',
  stdoutTruncated: false,
  stderrTruncated: false,
  durationMs: 900,
  artifacts: [],
  rejected: [],
  message: 'ok',
};

describe.skipIf(!ready)(`finishCoderStep activity (${ready ? 'live' : missingReason()})`, () => {
  const w = new WebParts();
  const attempt = attemptOf('finish', 30_000);
  beforeAll(() => w.start());
  afterAll(() => w.close());

  async function finish(judge: boolean | undefined, wrapUp = false) {
    w.llm.script([
      { name: 'analyst', match: bySchema('CodeFindings'), reply: { json: { text: 'Costs fell to 0.445.', summary: 'A table.' } } },
      { name: 'judge', match: bySchema('JudgeVerdict'), reply: { json: { passed: false, feedback: 'Add 2022.' } } },
    ]);
    const researchId = await w.newRun('coder-results');
    if (wrapUp) await w.store.events.append(researchId, [{ key: 'steer:1', type: 'steer', data: { kind: 'wrapUp', summary: 'wrap up' } }]);
    const input = {
      researchId,
      key: 'step/calc/1',
      question: 'How fast did solar costs fall?',
      locale: 'en-US',
      step: {
        id: 'calc',
        title: 'Compute',
        description: 'Tabulate the costs',
        type: 'processing' as const,
        needSearch: false,
        dependsOn: [],
      },
      dependencyKeys: [],
      code: 'print(1)',
      explanation: 'prints the table',
      run: RUN,
      attempts: 1,
      ...(judge === undefined ? {} : { judge }),
    };
    return attempt(input, 1, w.groups.llm.finishCoderStep);
  }

  it('judges the findings it wrote when asked, with the judge call in its usage', async () => {
    const out = await finish(true);
    expect(w.asked('analyst')).toBe(1);
    expect(w.asked('judge')).toBe(1);
    expect(out.verdict).toEqual({ passed: false, feedback: 'Add 2022.' });
    // The judge read the findings just stored.
    const judged = w.llm.requests.find((r) => r.rule === 'judge')!;
    expect(JSON.stringify(judged.body.messages)).toContain('Costs fell to 0.445.');
    const alone = await finish(undefined);
    expect(out.usage.promptTokens).toBeGreaterThan(alone.usage.promptTokens);
  });

  it('does not judge when the run is wrapping up, nor when not asked', async () => {
    const wrapped = await finish(true, true);
    expect(w.asked('judge')).toBe(0);
    expect(wrapped.verdict).toBeUndefined();
    const plain = await finish(false);
    expect(w.asked('judge')).toBe(0);
    expect(plain.verdict).toBeUndefined();
  });
});
