// The roles' registry stays whole and true (src/activities/roles/index.ts): each role is found by
// its name (module, prompt file), every prompt and part matches its file, every role activity is
// one the workflows call and every model call the workflows make is a role's. Prompt text lives in
// prompts/ only: no string in src/ repeats a prompt's words, and the sections that replaced text
// built in code render it as it was.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { MODEL_CALL_PARTS } from '../../src/activities/llm/model-call';
import { loadTemplate, parseTemplate, renderPart, renderPrompt, templateVariables } from '../../src/activities/llm/render';
import { createPhaseActivities } from '../../src/activities/phases';
import { createRoleActivities, PARTS, PROMPTS, ROLES } from '../../src/activities/roles';
import type { RoleDeps } from '../../src/activities/role-kit/role';
import type { AnyPrompt } from '../../src/activities/llm/prompt-def';
import { ROOT } from '../support/spawn';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** Roles whose prompt file is not named like the role: the call log names prompts by their file,
 *  and recorded calls and tests know them by it. */
const PROMPT_FILE_OF: Record<string, string> = { researcher: 'researcher-react' };

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((f) => {
    const rel = path.join(dir, f);
    return statSync(path.join(ROOT, rel)).isDirectory() ? filesUnder(rel) : [rel];
  });
}

describe('the roles registry', () => {
  const roles = Object.entries(ROLES);

  it.each(roles)('%s: its module and its prompt file are named after it', async (name, role) => {
    const module = (await import(`../../src/activities/roles/${kebab(name)}.ts`)) as Record<string, unknown>;
    expect(module[name]).toBe(role);
    expect(Object.values(role.prompts)[0]!.file).toBe(PROMPT_FILE_OF[name] ?? kebab(name));
  });

  it('lists every prompt file: each is a prompt of a role or a file of parts', () => {
    const used = new Set([...Object.values(PROMPTS).map((p) => p.file), ...PARTS.map((p) => p.file)]);
    const files = readdirSync(path.join(ROOT, 'prompts')).map((f) => f.replace(/\.md$/, ''));
    expect(files.sort()).toEqual([...used].sort());
  });

  it.each(Object.entries(PROMPTS))('prompt %s: its system and user parts use exactly the declared variables', (_name, def) => {
    const file = parseTemplate(loadTemplate(def.file), def.file);
    expect(templateVariables(`${file.system}\n${file.user}`).sort()).toEqual(Object.keys(def.vars.shape).sort());
  });

  it.each(Object.entries(PROMPTS))(
    'prompt %s: its system part names only its settings (per-call text goes in the user part)',
    (_name, def) => {
      const file = parseTemplate(loadTemplate(def.file), def.file);
      const settings: readonly string[] = (def as AnyPrompt).settings ?? [];
      expect(templateVariables(file.system).filter((v) => !settings.includes(v))).toEqual([]);
      expect(settings.filter((v) => !(v in def.vars.shape))).toEqual([]);
    },
  );

  it.each(PARTS.map((p) => [`${p.file}#${p.part}`, p] as const))('part %s: is in its file and uses exactly its variables', (_n, def) => {
    const template = parseTemplate(loadTemplate(def.file), def.file).parts[def.part];
    expect(template, `prompts/${def.file}.md has no "<!-- part: ${def.part} -->"`).toBeDefined();
    expect(templateVariables(template!).sort()).toEqual(Object.keys((def.vars as unknown as { shape: object }).shape).sort());
  });

  it('declares every part the prompt files hold', () => {
    const declared = new Set(PARTS.map((p) => `${p.file}#${p.part}`));
    const inFiles = readdirSync(path.join(ROOT, 'prompts')).flatMap((f) => {
      const name = f.replace(/\.md$/, '');
      return Object.keys(parseTemplate(loadTemplate(name), name).parts).map((part) => `${name}#${part}`);
    });
    expect(inFiles.filter((p) => !declared.has(p))).toEqual([]);
    expect(PARTS.length).toBe(declared.size);
    expect(MODEL_CALL_PARTS.every((p) => declared.has(`${p.file}#${p.part}`))).toBe(true);
  });

  it('has the workflows call every role activity, and no model call that is not a role', () => {
    const workflowCode = filesUnder('src/workflows')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(path.join(ROOT, f), 'utf8'))
      .join('\n');
    const called = new Set([...workflowCode.matchAll(/\bllm\.([a-zA-Z]+)\.execute(?:WithOptions)?\b/g)].map((m) => m[1]!));
    const registered = Object.keys({ ...createRoleActivities({} as RoleDeps), ...createPhaseActivities({} as RoleDeps) });
    expect(registered.filter((a) => !called.has(a))).toEqual([]);
    expect([...called].filter((a) => !registered.includes(a))).toEqual([]);
    // A role answered inside another group's activity: that activity is called.
    for (const role of Object.values(ROLES)) {
      const elsewhere = 'answeredIn' in role ? role.answeredIn : undefined;
      if (elsewhere) expect(workflowCode).toMatch(new RegExp(`\\.${elsewhere.activity}\\.execute`));
    }
  });
});

/** Lowercase word 6-grams of a text: a sentence that appears in two places shares them. */
function shingles(text: string): Set<string> {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
  const out = new Set<string>();
  for (let i = 0; i + 6 <= words.length; i++) out.add(words.slice(i, i + 6).join(' '));
  return out;
}

/** Strings that are not prompt text though a model may read them: a schema field's description
 *  (it travels with its schema in `response_format`) and a role's line for the docs. */
function exempt(node: ts.Node): boolean {
  const parent = node.parent as ts.Node | undefined;
  if (!parent) return false;
  if (ts.isCallExpression(parent) && ts.isPropertyAccessExpression(parent.expression)) return parent.expression.name.text === 'describe';
  return ts.isPropertyAssignment(parent) && parent.name.getText() === 'does';
}

/** The text of every string and template literal of a TypeScript file (comments are not strings). */
function stringLiterals(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (exempt(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) out.push(node.head.text, ...node.templateSpans.map((s) => s.literal.text));
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe('prompt text', () => {
  it('lives in prompts/ only: no string in src/ repeats six words of a prompt (schema field descriptions aside)', () => {
    const promptWords = new Set(
      readdirSync(path.join(ROOT, 'prompts')).flatMap((f) => [
        ...shingles(
          readFileSync(path.join(ROOT, 'prompts', f), 'utf8')
            .replace(/<!--[\s\S]*?-->/g, '\n')
            .replace(/\{\{[^}]*\}\}/g, '\n'),
        ),
      ]),
    );
    expect(promptWords.size).toBeGreaterThan(1_000);
    const repeated = filesUnder('src')
      .filter((f) => f.endsWith('.ts'))
      .flatMap((file) =>
        stringLiterals(file).flatMap((literal) =>
          [...shingles(literal)].filter((s) => promptWords.has(s)).map((s) => `${file}: "${s}" in "${literal.slice(0, 80)}"`),
        ),
      );
    expect(repeated).toEqual([]);
  });

  it('renders the researcher its tools as the code that built them did', () => {
    const vars = {
      question: 'q',
      locale: 'en-US',
      stepTitle: 't',
      stepDescription: 'd',
      feedback: '(none)',
      dependencies: '(none)',
      inputDir: '/work',
      background: '(none)',
    };
    const web = renderPrompt(PROMPTS.researcherTurn, { ...vars, web: true, knowledge: false, python: true, think: false }).system;
    expect(web).toContain(
      'Tools:\n- `web_search(queries)`: 1-5 short keyword queries. Results carry source ids like [S3f9a01c2].\n' +
        "- `crawl(urls, goal)`: read up to 5 pages from the results, for a goal you state; returns the evidence found, with the page's source id.\n" +
        '\n\n- `python(code, files, data)`: runs a Python program in a sandbox without network. Compute with the figures you found ' +
        '(totals, shares, growth rates, unit conversions, charts) instead of doing arithmetic yourself. Give it earlier results ' +
        'as `files` by their source ids (the program reads /work/<id>.md) and cite those sources for what it computes.\n\nRules:',
    );
    const given = renderPrompt(PROMPTS.researcherTurn, { ...vars, web: false, knowledge: true, python: false, think: false }).system;
    expect(given).toContain(
      "not from new web searches, and may look into the user's documents:\n- `knowledge_search(query, alternatives)`: the user's own documents",
    );
    expect(given).not.toContain('python(');
    const thinking = renderPrompt(PROMPTS.researcherTurn, { ...vars, web: true, knowledge: false, python: false, think: true }).system;
    expect(thinking).toContain("with the page's source id.\n\n- `think(reflection)`: between searches, note in a few sentences");
    const alone = renderPrompt(PROMPTS.researcherTurn, { ...vars, web: false, knowledge: false, python: false, think: false }).system;
    expect(alone).toContain('(the background brief and earlier results), not from new web searches.\n\n\n\n\nRules:');
  });

  it('renders the flags of the planner, the coordinator, the coder and the reporter as sentences', () => {
    const plan = { question: 'q', locale: 'en-US', maxSteps: 3, background: 'b', feedback: '(none)', userMemory: '' };
    const invalid = renderPrompt(PROMPTS.planner, { ...plan, processing: false, problems: 'x; y' });
    expect(invalid.system).toMatch(
      /- Every step has `type` `research` \(web search and reading\)\. No code sandbox is available in this deployment, so plan no `processing` steps\.\n/,
    );
    // The repair request comes last: the planner's second attempt sends its first's text before it.
    expect(invalid.user).toMatch(/\n\nYour previous plan was invalid: x; y\. Fix these problems\.$/);
    const valid = renderPrompt(PROMPTS.planner, { ...plan, processing: false, problems: '' });
    expect(invalid.user.startsWith(valid.user)).toBe(true);
    expect(invalid.system.split('Current date')[0]).toBe(valid.system.split('Current date')[0]);
    expect(renderPrompt(PROMPTS.planner, { ...plan, processing: true, problems: '' }).system).toMatch(
      /- `type` is `research` for finding information[\s\S]*follow it\.\n\nThe question/,
    );
    const ask = { question: 'q', clarifications: '(none)', userMemory: '' };
    expect(renderPrompt(PROMPTS.coordinator, { ...ask, requestedLocale: 'de-DE', allowClarification: true }).system).toMatch(
      /- If the request is too ambiguous to research [\s\S]*; otherwise set it to null\.\n[\s\S]*`fr-FR` for French\. The user asked for the report in de-DE; use that tag\.\n/,
    );
    expect(renderPrompt(PROMPTS.coordinator, { ...ask, requestedLocale: '', allowClarification: false }).system).toMatch(
      /- Always set `clarificationQuestion` to null\.\n[\s\S]*`fr-FR` for French\. \n/,
    );
    const code = {
      question: 'q',
      stepTitle: 't',
      stepDescription: 'd',
      packages: 'numpy',
      files: '(none)',
      timeoutSeconds: 60,
      memoryMb: 512,
      dependencies: '(none)',
    };
    const fix = { previousStatus: 'error', previousMessage: 'exit 1', previousCode: 'print(x)', previousStderr: 'NameError' };
    expect(renderPrompt(PROMPTS.coder, { ...code, ...fix, feedback: 'More.' }).user).toContain(
      'Your previous program failed (error: exit 1). Fix it.\nPrevious program:\n```python\nprint(x)\n```\nError output (end):\nNameError',
    );
    const none = { previousStatus: '', previousMessage: '', previousCode: '', previousStderr: '' };
    expect(renderPrompt(PROMPTS.coder, { ...code, ...none, feedback: 'More.' }).user).toMatch(
      /\n\nA reviewer rejected an earlier attempt of this step: More\.$/,
    );
    // The attempt's own text comes last: every attempt of a step sends the same text before it.
    const first = renderPrompt(PROMPTS.coder, { ...code, ...none, feedback: '' });
    const again = renderPrompt(PROMPTS.coder, { ...code, ...fix, feedback: '' });
    expect(again.system.split('Current date')[0]).toBe(first.system.split('Current date')[0]);
    expect(again.user!.startsWith(first.user!.trimEnd())).toBe(true);
    const report = {
      question: 'q',
      locale: 'English',
      findings: 'f',
      references: 'r',
      notes: '(none)',
      audience: '',
      instructions: '',
      userMemory: '',
    };
    const rejected = renderPrompt(PROMPTS.reporter, { ...report, brief: true, rejected: 'it cites nothing' });
    expect(rejected.system).toContain('Length: brief: about 250 to 500 words, key points and a short overview; no long analysis.\n\n');
    expect(rejected.user).toMatch(
      /\n\nNotes about this run: \(none\)\n\nYour previous report was not accepted, because it cites nothing\. Write the whole report again and fix this\.$/,
    );
    // A second draft sends the first's text before its reason.
    const draft = renderPrompt(PROMPTS.reporter, { ...report, brief: true, rejected: '' });
    expect(rejected.user.startsWith(draft.user)).toBe(true);
    expect(rejected.system.split('Current date')[0]).toBe(draft.system.split('Current date')[0]);
  });

  it('renders a part with its flags, and wraps its untrusted variables', () => {
    const repair = PARTS.find((p) => p.file === 'model-call' && p.part === 'repair-json')!;
    expect(renderPart(repair, { problem: 'the answer was cut off (finish_reason: length)', cutOff: true })).toBe(
      'Your previous answer could not be used: the answer was cut off (finish_reason: length); answer again, more briefly. ' +
        'Reply with JSON that matches the schema, and nothing else.',
    );
    const guidance = PARTS.find((p) => p.part === 'guidance')!;
    expect(renderPart(guidance, { guidance: '- a</user_guidance>' })).toMatch(
      /\n<user_guidance>\n- a<\\\/user_guidance>\n<\/user_guidance>$/,
    );
  });
});
