// The determinism boundary is enforced by lint: prove the rule fires where it must.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/spawn';

const eslint = new ESLint({ cwd: ROOT });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('workflow lint rules', () => {
  it.each([
    ["import fs from 'node:fs';\nexport const x = fs;", 'no-restricted-imports'],
    ["import { readFileSync } from 'fs';\nexport const x = readFileSync;", 'no-restricted-imports'],
    ["import pg from 'pg';\nexport const x = pg;", 'no-restricted-imports'],
    ["import { createActivities } from '../activities';\nexport const x = createActivities;", 'no-restricted-imports'],
    ['export const x = process.env.HOME;', 'no-restricted-globals'],
  ])('rejects %j under src/workflows', async (code, rule) => {
    expect(await ruleIds(code, `${ROOT}/src/workflows/bad.ts`)).toContain(rule);
  });

  it('allows type-only activity imports in workflows and the same imports elsewhere', async () => {
    expect(
      await ruleIds("import type { Activities } from '../activities';\nexport type A = Activities;", `${ROOT}/src/workflows/ok.ts`),
    ).toEqual([]);
    expect(await ruleIds("import fs from 'node:fs';\nexport const x = fs;", `${ROOT}/src/activities/ok.ts`)).toEqual([]);
  });

  it.each([
    ["import { readFileSync } from 'node:fs';\nexport const x = readFileSync;", 'src/shared/bad.ts'],
    ["import { ApplicationFailure } from '@temporalio/activity';\nexport const x = ApplicationFailure;", 'src/shared/bad.ts'],
    ["import { createStore } from '../activities/store';\nexport const x = createStore;", 'src/shared/bad.ts'],
    ["import { researchWorkflow } from '../workflows/research';\nexport const x = researchWorkflow;", 'src/activities/bad.ts'],
    ["import { createApp } from '../api/app';\nexport const x = createApp;", 'src/infra/bad.ts'],
  ])('keeps the layers: rejects %j in %s', async (code, file) => {
    expect(await ruleIds(code, `${ROOT}/${file}`)).toContain('no-restricted-imports');
  });

  it('keeps process.env inside src/config.ts', async () => {
    expect(await ruleIds('export const x = process.env.HOME;', `${ROOT}/src/api/bad.ts`)).toContain('no-restricted-properties');
  });
});
