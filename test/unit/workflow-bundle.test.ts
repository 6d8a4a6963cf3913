import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { workflowBundleKey } from '../../src/infra/workflow-bundle';
import { workflowBundle } from '../support/services';

const ROOT = path.join(import.meta.dirname, '..', '..');

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
  const bundled = () => [...workflowBundle().code.matchAll(/^\/\*\*\*\/ "([^"]+)"$/gm)].map((m) => m[1]!);

  // The bundle's modules are evaluated on every worker thread (and by the SDK's way, by every
  // workflow): validation libraries, the activity side and Node-only code stay out.
  it('holds no zod, no schema module and no activity code', () => {
    const modules = bundled();
    expect(modules.length).toBeGreaterThan(20);
    expect(modules).toContain('./src/workflows/research.ts');
    expect(
      modules.filter((m) => /node_modules\/zod\/|src\/shared\/(schemas|messages|llm-outputs|update-schemas)\.ts|src\/activities\//.test(m)),
    ).toEqual([]);
  });

  it('preloads the workflow modules: one evaluation shared by every workflow of the thread', () => {
    expect(workflowBundle().code).toMatch(
      /exports\.preloadModules = function preloadModules\(\) \{\s*__webpack_require__\([^)]*"\.\/src\/workflows\/index\.ts"\);/,
    );
  });

  // Shared by every workflow a thread runs, a module's state would leak from one run into another
  // (and break replay): nothing at module level may change after the module is evaluated.
  it('holds no module-level state in its own modules: no let or var, constants frozen or read-only', () => {
    const own = bundled().filter((m) => m.startsWith('./src/'));
    expect(own.length).toBeGreaterThan(20);
    const found = own.flatMap((m) => moduleState(path.join(ROOT, m)).map((what) => `${m}: ${what}`));
    expect(found).toEqual([]);
    // The check sees what it is meant to.
    const probe = path.join(mkdtempSync(path.join(os.tmpdir(), 'state-')), 'probe.ts');
    writeFileSync(
      probe,
      [
        'let calls = 0;',
        'export const seen = new Map<string, number>();',
        'const limits = { a: 1 };',
        'const ok = Object.freeze({ a: 1 });',
        "const alsoOk = ['a'] as const;",
        'const readOnly: ReadonlySet<string> = new Set();',
        'class Counter { static count = 0; static readonly fine = 1; }',
      ].join('\n'),
    );
    expect(moduleState(probe)).toEqual(['let calls', 'seen = new Map', 'limits = {…}', 'static Counter.count']);
  });
});

/** What a module keeps at its top level that a caller could change: its findings, one a line. */
function moduleState(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const readOnlyType = (t: ts.TypeNode | undefined) =>
    Boolean(t && /^(Readonly|ReadonlySet|ReadonlyMap|ReadonlyArray)\b|^readonly /.test(t.getText()));
  const frozenOrConst = (e: ts.Expression): boolean => {
    if (ts.isAsExpression(e) && e.type.getText() === 'const') return true;
    if (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) return frozenOrConst(e.expression);
    return ts.isCallExpression(e) && e.expression.getText() === 'Object.freeze';
  };
  const mutable = (e: ts.Expression): string | undefined => {
    if (ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) return mutable(e.expression);
    if (ts.isObjectLiteralExpression(e)) return '{…}';
    if (ts.isArrayLiteralExpression(e)) return '[…]';
    if (ts.isNewExpression(e)) return `new ${e.expression.getText()}`;
    return undefined;
  };
  for (const st of source.statements) {
    if (ts.isVariableStatement(st)) {
      const isConst = (st.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of st.declarationList.declarations) {
        const name = d.name.getText();
        if (!isConst) found.push(`${st.declarationList.flags & ts.NodeFlags.Let ? 'let' : 'var'} ${name}`);
        else if (d.initializer && !frozenOrConst(d.initializer) && !readOnlyType(d.type)) {
          const kind = mutable(d.initializer);
          if (kind) found.push(`${name} = ${kind}`);
        }
      }
    } else if (ts.isClassDeclaration(st)) {
      for (const m of st.members) {
        const mods = ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : [];
        const is = (k: ts.SyntaxKind) => mods.some((x) => x.kind === k);
        if (ts.isPropertyDeclaration(m) && is(ts.SyntaxKind.StaticKeyword) && !is(ts.SyntaxKind.ReadonlyKeyword))
          found.push(`static ${st.name?.getText()}.${m.name.getText()}`);
      }
    }
  }
  return found;
}
