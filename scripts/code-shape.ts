// The code's shape, measured with the TypeScript compiler: the import graph of src/ (circles,
// imports that climb the layers, roles that import roles, the workflows' determinism boundary) and the length of every
// function, with a shorter limit in the workflow code. test/unit/code-shape.test.ts asserts on it;
// this prints it:
//
//   node bin/run-ts.mjs scripts/code-shape.ts
//
// Which imports count:
// - Layers count every import, `import type` and `typeof import('…')` included: a type from a
//   higher layer ties the lower one to it as surely as a value does.
// - Circles count every import, types included: a circle of types loads nothing in a circle, but
//   its files still cannot be read, changed or tested one without the others.
// - A role (src/activities/roles/<role>.ts) imports no other role: what roles share is in
//   src/activities/role-kit/, and activities that chain several roles' calls in src/activities/phases/.
//   Only the registry (roles/index.ts) imports them all.
// - The determinism boundary: workflow code imports values only from src/workflows, src/shared
//   and the packages in WORKFLOW_PACKAGES (activities as types only); the workflow bundle's cache
//   key (src/infra/workflow-bundle.ts) hashes exactly those two directories.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MAX_FUNCTION_LINES = 100;
/** In the workflow code, where each entry point reads as a table of contents: each phase, loop and
 *  handler a function of its own. */
export const MAX_WORKFLOW_FUNCTION_LINES = 60;
export const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common', 'zod'];

/** Lowest first: a module may import from its own layer and the ones before it. Entry points are
 *  the composition roots: they sit above the API and the CLI, and nothing imports them. */
export const LAYERS: { name: string; paths: string[] }[] = [
  { name: 'shared', paths: ['src/shared/', 'src/types/'] },
  { name: 'infra and config', paths: ['src/infra/', 'src/config.ts', 'src/config/'] },
  { name: 'activities', paths: ['src/activities/'] },
  { name: 'workflows', paths: ['src/workflows/'] },
  { name: 'api and cli', paths: ['src/api/', 'src/client/', 'src/cli/', 'src/mcp/'] },
  { name: 'entry points', paths: ['src/cli.ts', 'src/serve.ts', 'src/server.ts', 'src/worker.ts'] },
];

export interface Import {
  from: string; // repository-relative path of the importing file
  to: string; // the imported module: a repository-relative path, or a package name
  line: number;
  typeOnly: boolean;
  runtime: boolean; // still there once types are erased
}

export interface FunctionSize {
  file: string;
  line: number;
  name: string;
  lines: number;
}

export function sourceFiles(dir = 'src'): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|tsx|mts)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => path.posix.join(dir, f.split(path.sep).join('/')))
    .sort();
}

export function layerOf(file: string): number {
  return LAYERS.findIndex((l) => l.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
}

/** Each file's tree, parsed once per text: the import graph and the function sizes read the same files. */
const trees = new Map<string, ts.SourceFile>();

function parse(file: string, text = readFileSync(path.join(ROOT, file), 'utf8')): ts.SourceFile {
  const known = trees.get(file);
  if (known?.text === text) return known;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  trees.set(file, sf);
  return sf;
}

const compilerOptions: ts.CompilerOptions = (() => {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config;
  return ts.parseJsonConfigFileContent(config, ts.sys, ROOT).options;
})();

// What the compiler itself keeps while it resolves a program's imports: a directory's lookups are made once.
const resolutions = ts.createModuleResolutionCache(ROOT, (f) => (ts.sys.useCaseSensitiveFileNames ? f : f.toLowerCase()), compilerOptions);

/** A repository-relative path for a module of this repository, the package name otherwise. */
function resolve(specifier: string, file: string): string {
  const resolved = ts.resolveModuleName(specifier, path.join(ROOT, file), compilerOptions, ts.sys, resolutions).resolvedModule;
  if (!resolved || resolved.isExternalLibraryImport) {
    return specifier.startsWith('.') ? path.posix.join(path.posix.dirname(file), specifier) : packageName(specifier);
  }
  return path.relative(ROOT, resolved.resolvedFileName).split(path.sep).join('/');
}

function packageName(specifier: string): string {
  const parts = specifier.replace(/^node:/, '').split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function allTypes(elements: readonly (ts.ImportSpecifier | ts.ExportSpecifier)[]): boolean {
  return elements.length > 0 && elements.every((e) => e.isTypeOnly);
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  return !clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings) && allTypes(clause.namedBindings.elements);
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  return !!node.exportClause && ts.isNamedExports(node.exportClause) && allTypes(node.exportClause.elements);
}

const literal = (n: ts.Node | undefined) => (n && ts.isStringLiteralLike(n) ? n.text : undefined);

/** Every module specifier in the file, with whether it is written as type-only. */
function writtenImports(sf: ts.SourceFile): { specifier: string; node: ts.Node; typeOnly: boolean }[] {
  const found: { specifier: string; node: ts.Node; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    let specifier: string | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(node)) [specifier, typeOnly] = [literal(node.moduleSpecifier), isTypeOnlyImport(node)];
    else if (ts.isExportDeclaration(node)) [specifier, typeOnly] = [literal(node.moduleSpecifier), isTypeOnlyExport(node)];
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      [specifier, typeOnly] = [literal(node.moduleReference.expression), node.isTypeOnly];
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      [specifier, typeOnly] = [literal(node.argument.literal), true];
    if (specifier !== undefined) found.push({ specifier, node, typeOnly });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

// The options ts.transpileModule compiles every file with: its defaults, then its own list of
// options it sets (typescript's transpileOptionValueCompilerOptions, left out of its .d.ts).
const transpileOptions: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES5,
  jsx: ts.JsxEmit.Preserve,
  ...compilerOptions,
  ...Object.fromEntries(
    (
      ts as unknown as { transpileOptionValueCompilerOptions: { name: string; transpileOptionValue: unknown }[] }
    ).transpileOptionValueCompilerOptions.map((o) => [o.name, o.transpileOptionValue]),
  ),
  suppressOutputPathCheck: true,
  allowNonTsExtensions: true,
  declaration: false,
  declarationMap: false,
};

/**
 * The specifiers left in each file once types are erased, as tsx and esbuild erase them (file by
 * file): what ts.transpileModule keeps, from one program of all the files with its options (each
 * file still compiled on its own: no resolution, no lib), read off each emitted tree, which is then
 * not printed.
 */
export function runtimeSpecifiers(texts: Map<string, string>): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const record: ts.TransformerFactory<ts.SourceFile> = () => (sf) => {
    found.set(sf.fileName, new Set(writtenImports(sf).map((i) => i.specifier)));
    return ts.factory.updateSourceFile(sf, []);
  };
  const host: ts.CompilerHost = {
    getSourceFile: (name) => {
      const text = texts.get(name);
      return text === undefined ? undefined : parse(name, text);
    },
    writeFile: () => {},
    getDefaultLibFileName: () => 'lib.d.ts',
    useCaseSensitiveFileNames: () => false,
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => '',
    getNewLine: () => '\n',
    fileExists: (name) => texts.has(name),
    readFile: () => '',
    directoryExists: () => true,
    getDirectories: () => [],
  };
  ts.createProgram([...texts.keys()], transpileOptions, host).emit(undefined, undefined, undefined, false, { after: [record] });
  return found;
}

export function importsOf(file: string, text = readFileSync(path.join(ROOT, file), 'utf8'), runtime?: Set<string>): Import[] {
  const sf = parse(file, text);
  runtime ??= runtimeSpecifiers(new Map([[file, text]])).get(file)!;
  return writtenImports(sf).map(({ specifier, node, typeOnly }) => ({
    from: file,
    to: resolve(specifier, file),
    line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
    typeOnly,
    runtime: !typeOnly && runtime.has(specifier),
  }));
}

export function importGraph(files = sourceFiles()): Import[] {
  const texts = new Map(files.map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8')]));
  const runtime = runtimeSpecifiers(texts);
  return files.flatMap((f) => importsOf(f, texts.get(f), runtime.get(f)));
}

const isInternal = (to: string) => to.startsWith('src/');

/** Every elementary circle of imports (types included), each once, starting at its smallest path. */
export function findCycles(imports: Import[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const i of imports) {
    if (isInternal(i.to) && i.from !== i.to) next.set(i.from, (next.get(i.from) ?? new Set()).add(i.to));
  }
  const cycles: string[][] = [];
  // Johnson's idea in its simplest form: from each start, walk only through larger paths, so each
  // circle is found once, from its smallest member. src/ is small enough for a plain search.
  for (const start of [...next.keys()].sort()) {
    const walk = (node: string, pathSoFar: string[]): void => {
      for (const to of next.get(node) ?? []) {
        if (to === start) cycles.push([...pathSoFar, start]);
        else if (to > start && !pathSoFar.includes(to)) walk(to, [...pathSoFar, to]);
      }
    };
    walk(start, [start]);
  }
  return cycles;
}

const ROLES_DIR = 'src/activities/roles/';
const ROLE_REGISTRY = `${ROLES_DIR}index.ts`;

/** Imports of a role by another role (the registry excepted). */
export function roleImports(imports: Import[]): string[] {
  return imports
    .filter((i) => i.from.startsWith(ROLES_DIR) && i.from !== ROLE_REGISTRY && i.to.startsWith(ROLES_DIR) && i.to !== i.from)
    .map((i) => `${i.from}:${i.line} imports ${i.to}`);
}

export function layerViolations(imports: Import[]): string[] {
  return imports
    .filter((i) => isInternal(i.to) && layerOf(i.to) > layerOf(i.from))
    .map((i) => `${i.from}:${i.line} (${LAYERS[layerOf(i.from)]?.name}) imports ${i.to} (${LAYERS[layerOf(i.to)]?.name})`);
}

export function unlayeredFiles(files = sourceFiles()): string[] {
  return files.filter((f) => layerOf(f) < 0);
}

/** Value imports in workflow code from anywhere but workflows, shared and WORKFLOW_PACKAGES. */
export function boundaryViolations(imports: Import[]): string[] {
  const allowed = (to: string) =>
    isInternal(to) ? to.startsWith('src/workflows/') || to.startsWith('src/shared/') : WORKFLOW_PACKAGES.includes(to);
  return imports
    .filter((i) => i.from.startsWith('src/workflows/') && !i.typeOnly && !allowed(i.to))
    .map((i) => `${i.from}:${i.line} imports ${i.to}${i.runtime ? '' : ' (only its types are used: write `import type`)'}`);
}

/** Value imports in the typed client from anywhere but the client and shared: the web page bundles
 *  it, so it takes only types from the API (no server code, no zod) and needs no package but fetch. */
export function clientViolations(imports: Import[]): string[] {
  const allowed = (to: string) => isInternal(to) && (to.startsWith('src/client/') || to.startsWith('src/shared/'));
  return imports
    .filter((i) => i.from.startsWith('src/client/') && !i.typeOnly && !allowed(i.to))
    .map((i) => `${i.from}:${i.line} imports ${i.to}${i.runtime ? '' : ' (only its types are used: write `import type`)'}`);
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

function isMeasured(node: ts.Node): node is FunctionNode {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isAccessor(node)) &&
    node.body !== undefined
  );
}

/** A readable name: the function's own, or what it is assigned to, or what it is passed to. */
function nameOf(node: FunctionNode, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(sf);
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(sf).slice(0, 40)})`;
  return '(anonymous)';
}

/** Every function's length from its first line to its last, nested closures included. */
export function functionSizes(file: string, text?: string): FunctionSize[] {
  const sf = parse(file, text);
  const sizes: FunctionSize[] = [];
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node, outer: string[]): void => {
    let names = outer;
    if (ts.isClassLike(node) && node.name) names = [...outer, node.name.text];
    if (isMeasured(node)) {
      names = [...outer, nameOf(node, sf)];
      const line = lineOf(node.getStart(sf));
      sizes.push({ file, line, name: names.join(' > '), lines: lineOf(node.getEnd()) - line + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, names));
  };
  visit(sf, []);
  return sizes;
}

const isWorkflowCode = (file: string) => file.startsWith('src/workflows/');

/** Functions longer than the limit outside the workflow code (src/workflows is measured apart). */
export function longFunctions(files = sourceFiles(), max = MAX_FUNCTION_LINES): FunctionSize[] {
  return files
    .filter((f) => !isWorkflowCode(f))
    .flatMap((f) => functionSizes(f))
    .filter((f) => f.lines > max);
}

/** Functions longer than the workflow code's own limit in src/workflows; `texts` stands in for
 *  the files it has (a test's). */
export function longWorkflowFunctions(
  files = sourceFiles(),
  max = MAX_WORKFLOW_FUNCTION_LINES,
  texts = new Map<string, string>(),
): FunctionSize[] {
  return files
    .filter(isWorkflowCode)
    .flatMap((f) => functionSizes(f, texts.get(f)))
    .filter((f) => f.lines > max);
}

export const describeFunction = (f: FunctionSize) => `${f.file}:${f.line} ${f.name}: ${f.lines} lines`;

// ---- who writes the research run's state ---------------------------------------------------

/** Methods that change the array, map or set they are called on. */
const MUTATORS = new Set(['push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'set', 'delete', 'clear', 'add']);

/**
 * Writes in `files` to state that another module declares: an assignment, `++`/`--`, `delete`, a
 * mutating method or `Object.assign` whose target is a member of an object whose type is declared
 * in another file (`run.phase = …`, `run.notes.push(…)`, `step.status = …` on a shared view type).
 * A class changes its own fields through `this`; a phase changes a part of the run only by calling
 * that part's methods. Locals (a map the phase made) are the phase's own.
 */
export function foreignWrites(files: string[], host = typeInfoHost()): string[] {
  const program = ts.createProgram(
    files.map((f) => path.join(ROOT, f)),
    { ...compilerOptions, noEmit: true },
    host,
  );
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const file of files) {
    const sf = program.getSourceFile(path.join(ROOT, file))!;
    const report = (node: ts.Node, target: ts.Expression) => {
      if (ownedHere(target, sf, checker)) return;
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      found.push(`${file}:${line} writes ${target.getText(sf)}`);
    };
    const visit = (node: ts.Node): void => {
      const target = writeTarget(node);
      if (target) report(node, target);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

// Declaration files (lib, @types, packages) parsed once in a process: each program reads the same ones.
const declarationFiles = new Map<string, ts.SourceFile>();

/** The compiler's host, reading no JSDoc in TypeScript files: there it holds no type (tsc itself
 *  skips all but @see and @link), and the 1,500 declaration files a phase reaches parse faster. */
export function typeInfoHost(): ts.CompilerHost {
  const host = ts.createCompilerHost(compilerOptions);
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeInfo;
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, ...rest) => {
    if (!name.endsWith('.d.ts')) return read(name, ...rest);
    const sf = declarationFiles.get(name) ?? read(name, ...rest);
    if (sf) declarationFiles.set(name, sf);
    return sf;
  };
  return host;
}

/** The member a node writes to, when it writes to one. */
function writeTarget(node: ts.Node): ts.Expression | undefined {
  const member = (e: ts.Expression | undefined) =>
    e && (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) ? e : undefined;
  if (
    ts.isBinaryExpression(node) &&
    node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
  )
    return member(node.left);
  if (
    (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
    [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(node.operator)
  )
    return member(node.operand);
  if (ts.isDeleteExpression(node)) return member(node.expression);
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return undefined;
  const callee = node.expression;
  if (callee.expression.getText() === 'Object' && callee.name.text === 'assign') return node.arguments[0];
  return MUTATORS.has(callee.name.text) ? member(callee.expression) : undefined;
}

/** `this` in `this.step(id).notes`: where a chain of members and calls starts. */
function rootOf(e: ts.Expression): ts.Expression {
  while (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e) || ts.isCallExpression(e) || ts.isNonNullExpression(e))
    e = e.expression;
  return e;
}

/** Whether the written object belongs to this file: reached from `this`, a local, or of a type declared here. */
function ownedHere(target: ts.Expression, sf: ts.SourceFile, checker: ts.TypeChecker): boolean {
  const owner = ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target) ? target.expression : target;
  if (rootOf(owner).kind === ts.SyntaxKind.ThisKeyword) return true;
  const declarations = checker.getTypeAtLocation(owner).getSymbol()?.getDeclarations() ?? [];
  return declarations.length > 0 && declarations.every((d) => d.getSourceFile() === sf);
}

function main(): number {
  const imports = importGraph();
  const sections: [string, string[]][] = [
    ['files in no layer', unlayeredFiles()],
    ['import circles', findCycles(imports).map((c) => c.join(' -> '))],
    ['roles importing roles', roleImports(imports)],
    ['imports from a lower layer to a higher one', layerViolations(imports)],
    ['workflow imports across the determinism boundary', boundaryViolations(imports)],
    ['client imports of server code or packages', clientViolations(imports)],
    [`functions over ${MAX_FUNCTION_LINES} lines outside src/workflows`, longFunctions().map(describeFunction)],
    [`functions over ${MAX_WORKFLOW_FUNCTION_LINES} lines in src/workflows`, longWorkflowFunctions().map(describeFunction)],
    ["writes to another module's state in the research phases", foreignWrites(sourceFiles('src/workflows/research'))],
  ];
  for (const [title, lines] of sections) console.log(`${title}: ${lines.length}${lines.map((l) => `\n  ${l}`).join('')}`);
  return sections.some(([, lines]) => lines.length > 0) ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
