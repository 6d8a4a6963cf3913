// The researcher's python tool without services: when it is offered, how its calls are checked,
// how its runs are numbered, and the probe that decides whether a sandbox is there.
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { parseToolCalls, toolDefinitions } from '../../src/activities/role-kit/researcher-tools';
import { createSandboxProbe } from '../../src/activities/sandbox/probe';
import { loadConfig } from '../../src/config';
import { PYTHON_RUNS_PER_ATTEMPT, pythonRunNumber } from '../../src/shared/llm-outputs';

const spec = { timeoutSeconds: 30, memoryMb: 256, packages: ['numpy', 'pandas'] };
const call = (args: unknown) => ({ id: 'c1', type: 'function' as const, function: { name: 'python', arguments: JSON.stringify(args) } });

describe('python tool', () => {
  it('is offered only with a sandbox, also to a step without the web', () => {
    const names = (tools: ReturnType<typeof toolDefinitions>) => tools.map((t) => (t.type === 'function' ? t.function.name : ''));
    expect(names(toolDefinitions([], { web: true }))).toEqual(['web_search', 'crawl']);
    expect(names(toolDefinitions([], { web: true, knowledge: true, python: spec }))).toEqual([
      'web_search',
      'crawl',
      'knowledge_search',
      'python',
    ]);
    expect(names(toolDefinitions([], { web: false, python: spec }))).toEqual(['python']);
    const [python] = toolDefinitions([], { web: false, python: spec });
    const description = python!.type === 'function' ? python!.function.description : '';
    expect(description).toMatch(/No network access and no package installs; available: numpy, pandas\./);
    expect(description).toMatch(/Limits: 30 s wall-clock, 256 MB memory\./);
    expect(description).toMatch(/saved to \/output are kept as artifacts/);
  });

  it('accepts code with source ids and inline files, and names what is wrong otherwise', () => {
    const ok = parseToolCalls([call({ code: 'print(1)', files: ['S0a1b2c3d'], data: { 'prices.csv': 'year,usd\n2010,1\n' } })]);
    expect(ok.problems).toEqual([]);
    expect(ok.calls).toEqual([
      { id: 'c1', name: 'python', args: { code: 'print(1)', files: ['S0a1b2c3d'], data: { 'prices.csv': 'year,usd\n2010,1\n' } } },
    ]);
    const bad = parseToolCalls([
      call({ code: 'x', files: ['page.md'] }),
      call({ code: 'x', data: { '../etc/passwd': 'x', 'main.py': 'y' } }),
      call({ code: 'x', data: { 'big.txt': 'x'.repeat(20_001) } }),
      call({ code: '' }),
    ]);
    expect(bad.calls).toEqual([]);
    expect(bad.problems).toEqual([
      'the arguments of python are invalid: files.0: expected a source id such as S3f9a01c2',
      'the arguments of python are invalid: data: "../etc/passwd" is not a plain file name such as "prices.csv"; data: "main.py" is not a plain file name such as "prices.csv"',
      'the arguments of python are invalid: data: inline data is limited to 20000 characters in all; pass larger data as source ids in files',
      expect.stringMatching(/^the arguments of python are invalid: code: /),
    ]);
  });

  it('numbers runs so that no two python calls of a step share artifact ids, across its attempts', () => {
    const numbers = [1, 2, 3].flatMap((attempt) => [2, 5, 6, 300].map((seq) => pythonRunNumber(attempt, seq)));
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(pythonRunNumber(2, 0)).toBe(2 * PYTHON_RUNS_PER_ATTEMPT);
  });

  it('finds no sandbox where no Docker engine answers, and keeps the answer for a while', async () => {
    let now = 0;
    const probe = createSandboxProbe(new Docker({ socketPath: '/nonexistent/docker.sock' }), 'any:latest', () => now);
    const first = probe();
    expect(await first).toBe(false);
    now += 1_000;
    expect(probe()).toBe(first);
    // A no is kept for seconds (a yes for a minute): an engine that starts later is soon found.
    now += 5_000;
    expect(probe()).not.toBe(first);
  });

  it('is configured by RESEARCHER_PYTHON: auto by default', () => {
    expect(loadConfig({}).sandbox.researcherPython).toBe('auto');
    expect(loadConfig({ RESEARCHER_PYTHON: 'false' }).sandbox.researcherPython).toBe('false');
    expect(() => loadConfig({ RESEARCHER_PYTHON: 'yes' })).toThrow(/RESEARCHER_PYTHON.*expected auto, true or false/);
  });
});
