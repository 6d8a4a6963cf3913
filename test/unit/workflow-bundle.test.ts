import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowBundleKey } from '../../src/infra/workflow-bundle';
import { workflowBundle } from '../support/services';

describe('the workflow bundle cache key', () => {
  it('changes with any workflow or shared source and with the lockfile, and only then', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'bundle-key-'));
    mkdirSync(path.join(root, 'src', 'workflows', 'research'), { recursive: true });
    mkdirSync(path.join(root, 'src', 'shared'), { recursive: true });
    mkdirSync(path.join(root, 'src', 'activities'), { recursive: true });
    const write = (rel: string, text: string) => writeFileSync(path.join(root, rel), text);
    write('src/workflows/research/team.ts', 'export const a = 1;');
    write('src/shared/plain.ts', 'export const b = 2;');
    write('src/activities/llm.ts', 'export const c = 3;');
    write('package-lock.json', '{}');
    const keys = [workflowBundleKey(root)];
    expect(workflowBundleKey(root)).toBe(keys[0]);
    // Activities are not in the bundle.
    write('src/activities/llm.ts', 'export const c = 4;');
    expect(workflowBundleKey(root)).toBe(keys[0]);
    for (const [rel, text] of [
      ['src/workflows/research/team.ts', 'export const a = 2;'],
      ['src/shared/plain.ts', 'export const b = 3;'],
      ['src/shared/new.ts', ''],
      // The bundler's options (preloadModules, plugins) are set here.
      ['src/worker.ts', 'bundleWorkflowCode({ preloadModules: [] })'],
      ['package-lock.json', '{"v":2}'],
    ] as const) {
      write(rel, text);
      keys.push(workflowBundleKey(root));
    }
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('the workflow bundle', () => {
  // Every workflow that starts evaluates the bundle's modules again: what is in it costs CPU at
  // every run and step. Validation libraries, the activity side and Node-only code stay out.
  it('holds no zod, no schema module and no activity code', () => {
    const modules = [...workflowBundle().code.matchAll(/^\/\*\*\*\/ "([^"]+)"$/gm)].map((m) => m[1]!);
    expect(modules.length).toBeGreaterThan(20);
    expect(modules).toContain('./src/workflows/research.ts');
    expect(
      modules.filter((m) => /node_modules\/zod\/|src\/shared\/(schemas|messages|llm-outputs|update-schemas)\.ts|src\/activities\//.test(m)),
    ).toEqual([]);
  });
});
