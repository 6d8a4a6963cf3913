// The code's shape, measured by scripts/code-shape.ts (which says which imports count for what):
// no import circle, no import from a lower layer to a higher one, workflow code on its side of the
// determinism boundary, and no function over MAX_FUNCTION_LINES lines outside src/workflows or
// over MAX_WORKFLOW_FUNCTION_LINES in it.
// The lint rules (test/unit/lint-rules.test.ts) flag the usual mistakes at the line; this checks
// the whole graph, so an import the lint patterns do not foresee is caught too.
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  describeFunction,
  findCycles,
  foreignWrites,
  functionSizes,
  type Import,
  importGraph,
  LAYERS,
  ROOT,
  layerViolations,
  roleImports,
  longFunctions,
  longWorkflowFunctions,
  MAX_FUNCTION_LINES,
  MAX_WORKFLOW_FUNCTION_LINES,
  boundaryViolations,
  runtimeSpecifiers,
  clientViolations,
  sourceFiles,
  typeInfoHost,
  unlayeredFiles,
} from '../../scripts/code-shape';

const imports = importGraph();
const edge = (from: string, to: string, runtime = true): Import => ({ from, to, line: 1, typeOnly: !runtime, runtime });

describe('the import graph of src/', () => {
  it('sees value imports, type imports and re-exports, resolved to files', () => {
    expect(imports).toContainEqual(expect.objectContaining({ from: 'src/worker.ts', to: 'src/activities/index.ts', runtime: true }));
    expect(imports).toContainEqual(expect.objectContaining({ from: 'src/worker.ts', to: 'src/config.ts', typeOnly: true }));
    expect(imports.filter((i) => i.to.startsWith('src/')).length).toBeGreaterThan(300);
  });

  it('puts every file in a layer', () => {
    expect(unlayeredFiles()).toEqual([]);
  });

  it('has no circle of imports, types included', () => {
    expect(findCycles(imports).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('has no role that imports another role', () => {
    expect(roleImports(imports)).toEqual([]);
  });

  it(`never imports from a lower layer to a higher one (${LAYERS.map((l) => l.name).join(' < ')})`, () => {
    expect(layerViolations(imports)).toEqual([]);
  });

  it('imports values into workflow code only from workflows, shared and the workflow packages', () => {
    expect(boundaryViolations(imports)).toEqual([]);
    expect(clientViolations(imports)).toEqual([]);
  });

  it('counts as run-time imports what ts.transpileModule keeps, reading every file in one program', () => {
    const file = 'src/shared/erasing.ts';
    const text = [
      "import { value, type Shape } from './used';",
      "import { OnlyAType } from './only-a-type';",
      "import unused from './unused';",
      "import type { Typed } from './typed';",
      "import './side-effect';",
      "export { again } from './re-exported';",
      "export type { Kind } from './type-re-exported';",
      "export * from './everything';",
      "type Loaded = typeof import('./type-query');",
      "export const run = (s: Shape, t: Typed, o: OnlyAType, l: Loaded) => value(s, t, o, l) ?? import('./dynamic');",
    ].join('\n');
    const tsconfig = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config;
    const compilerOptions = { ...ts.parseJsonConfigFileContent(tsconfig, ts.sys, ROOT).options, noEmit: false };
    const js = ts.transpileModule(text, { compilerOptions, fileName: file }).outputText;
    const transpiled = new Set(ts.preProcessFile(js, true, true).importedFiles.map((f) => f.fileName));
    const runtime = runtimeSpecifiers(
      new Map([
        [file, text],
        ['src/shared/other.ts', "import { OnlyAType } from './only-a-type';\nexport const x: OnlyAType = 1;"],
      ]),
    );
    expect(runtime.get(file)).toEqual(transpiled);
    expect([...transpiled].sort()).toEqual(['./dynamic', './everything', './re-exported', './side-effect', './used']);
    expect(runtime.get('src/shared/other.ts')).toEqual(new Set());
  });

  it('would report a typed-client import of server code or of a package', () => {
    const bad = [
      edge('src/client/index.ts', 'src/client/http.ts'),
      edge('src/client/index.ts', 'src/shared/sse.ts'),
      edge('src/client/index.ts', 'src/api/contract.ts', false),
      edge('src/client/http.ts', 'src/api/contract.ts'),
      edge('src/client/http.ts', 'zod'),
    ];
    expect(clientViolations(bad)).toEqual(['src/client/http.ts:1 imports src/api/contract.ts', 'src/client/http.ts:1 imports zod']);
  });

  it('would report a circle, a climbing import and a crossing of the boundary', () => {
    const bad = [
      edge('src/shared/a.ts', 'src/shared/b.ts'),
      edge('src/shared/b.ts', 'src/shared/c.ts'),
      edge('src/shared/c.ts', 'src/shared/a.ts'),
      edge('src/infra/x.ts', 'src/infra/y.ts', false),
      edge('src/infra/y.ts', 'src/infra/x.ts'),
      edge('src/activities/x.ts', 'src/workflows/w.ts', false),
      edge('src/workflows/w.ts', 'src/activities/x.ts'),
      edge('src/workflows/w.ts', 'src/activities/y.ts', false),
    ];
    // A circle through a type import is a circle too.
    expect(findCycles(bad)).toEqual([
      ['src/activities/x.ts', 'src/workflows/w.ts', 'src/activities/x.ts'],
      ['src/infra/x.ts', 'src/infra/y.ts', 'src/infra/x.ts'],
      ['src/shared/a.ts', 'src/shared/b.ts', 'src/shared/c.ts', 'src/shared/a.ts'],
    ]);
    expect(layerViolations(bad)).toEqual(['src/activities/x.ts:1 (activities) imports src/workflows/w.ts (workflows)']);
    expect(boundaryViolations(bad)).toEqual(['src/workflows/w.ts:1 imports src/activities/x.ts']);
  });
});

describe('roles', () => {
  it('would report a role importing a role, not the registry or a role using the kit or a phase using roles', () => {
    const graph = [
      edge('src/activities/roles/planner.ts', 'src/activities/roles/user-memory.ts', false),
      edge('src/activities/roles/index.ts', 'src/activities/roles/planner.ts'),
      edge('src/activities/roles/planner.ts', 'src/activities/role-kit/plan-repair.ts'),
      edge('src/activities/phases/report.ts', 'src/activities/roles/reporter.ts'),
    ];
    expect(roleImports(graph)).toEqual(['src/activities/roles/planner.ts:1 imports src/activities/roles/user-memory.ts']);
  });
});

describe('function length outside src/workflows', () => {
  it('counts a factory in full, its closures included, and each closure on its own', () => {
    const closure = (name: string) => `  ${name}: async () => {\n${'    step();\n'.repeat(3)}  },\n`;
    const text = `export function createThings() {\n  return {\n${closure('a')}${closure('b')}  };\n}\n`;
    expect(functionSizes('src/activities/things.ts', text).map(describeFunction)).toEqual([
      'src/activities/things.ts:1 createThings: 14 lines',
      'src/activities/things.ts:3 createThings > a: 5 lines',
      'src/activities/things.ts:8 createThings > b: 5 lines',
    ]);
  });

  it(`keeps every function to ${MAX_FUNCTION_LINES} lines`, () => {
    expect(longFunctions().map(describeFunction)).toEqual([]);
  });
});

describe('function length in src/workflows', () => {
  it(`would report a workflow function over ${MAX_WORKFLOW_FUNCTION_LINES} lines, and not one of that length elsewhere`, () => {
    const fn = (lines: number) => `export async function w() {\n${'  step();\n'.repeat(lines - 2)}}\n`;
    const texts = new Map([
      ['src/workflows/long.ts', fn(MAX_WORKFLOW_FUNCTION_LINES + 1)],
      ['src/workflows/research/at-limit.ts', fn(MAX_WORKFLOW_FUNCTION_LINES)],
      ['src/activities/long.ts', fn(MAX_WORKFLOW_FUNCTION_LINES + 1)],
    ]);
    expect(longWorkflowFunctions([...texts.keys()], MAX_WORKFLOW_FUNCTION_LINES, texts).map(describeFunction)).toEqual([
      `src/workflows/long.ts:1 w: ${MAX_WORKFLOW_FUNCTION_LINES + 1} lines`,
    ]);
  });

  it(`keeps every workflow function to ${MAX_WORKFLOW_FUNCTION_LINES} lines`, () => {
    expect(longWorkflowFunctions().map(describeFunction)).toEqual([]);
  });
});

describe('the research phases and the state they change', () => {
  it('change a part of the run only through its methods', () => {
    expect(foreignWrites(sourceFiles('src/workflows/research'))).toEqual([]);
  });

  it('would report a phase that writes the run state or a step view itself', () => {
    const files: Record<string, string> = {
      'src/x/state.ts': [
        'export interface StepView { status: string }',
        'export class State {',
        '  count = 0;',
        '  readonly notes: string[] = [];',
        '  readonly steps: StepView[] = [];',
        '  private hidden = 0;',
        '  bump(): void { this.count++; this.notes.push("x"); this.hidden = 1; }',
        '}',
      ].join('\n'),
      'src/x/phase.ts': [
        "import type { State } from './state';",
        'export function phase(run: State): void {',
        '  const mine = new Map<string, number>();',
        '  mine.set("a", 1);',
        '  run.bump();',
        '  run.count = 2;',
        '  run.notes.push("y");',
        '  for (const s of run.steps) Object.assign(s, { status: "done" });',
        '  run.steps[0]!.status = "x";',
        '}',
      ].join('\n'),
    };
    const host = typeInfoHost();
    const getSourceFile = host.getSourceFile.bind(host);
    const virtual = (name: string) => files[path.relative(ROOT, name).split(path.sep).join('/')];
    host.getSourceFile = (name, target, ...rest) => {
      const text = virtual(name);
      return text === undefined ? getSourceFile(name, target, ...rest) : ts.createSourceFile(name, text, target);
    };
    host.fileExists = (name) => virtual(name) !== undefined || ts.sys.fileExists(name);
    host.readFile = (name) => virtual(name) ?? ts.sys.readFile(name);
    expect(foreignWrites(['src/x/state.ts', 'src/x/phase.ts'], host)).toEqual([
      'src/x/phase.ts:6 writes run.count',
      'src/x/phase.ts:7 writes run.notes',
      'src/x/phase.ts:8 writes s',
      'src/x/phase.ts:9 writes run.steps[0]!.status',
    ]);
  });
});
