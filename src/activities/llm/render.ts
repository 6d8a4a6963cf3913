// Prompt templates live in prompts/<name>.md and are rendered only here, inside activities.
// A template file is a system part and, after a line `<!-- user -->`, a user part; after a line
// `<!-- part: <name> -->`, a part that code sends on its own (up to the next such line). Every part
// is trimmed. In a part:
// - `{{name}}` is a variable;
// - `{{#name}}…{{/name}}` is kept when the variable is true or non-empty text (`{{^name}}…{{/name}}`
//   when it is false or empty). Only the tags are removed: the text around them stays as written,
//   newlines included.
// Every variable a template names must be given (a missing one is an error, never an empty string,
// even when its section is left out); values are checked against the prompt's zod schema, and
// untrusted ones are wrapped in delimited blocks here and only here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { PROMPTS_DIR } from '../../infra/paths';
import { DATE_LINE } from './model-call';
import type { AnyPart, AnyPrompt, PromptVars, VarValue } from './prompt-def';
import { wasWere } from '../../shared/plural';

export interface RenderedPrompt {
  system: string;
  user: string;
}

/** A template file taken apart: its system and user parts (absent in a file of parts only) and its named parts. */
export interface TemplateFile {
  system: string;
  user: string | undefined;
  parts: Record<string, string>;
}

const cache = new Map<string, string>();
const parsedCache = new Map<string, TemplateFile>();

export function loadTemplate(name: string, dir = PROMPTS_DIR): string {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) {
    throw ApplicationFailure.nonRetryable(`invalid prompt name "${name}"`, ErrorType.PromptError);
  }
  const key = `${dir}/${name}`;
  let text = cache.get(key);
  if (text === undefined) {
    try {
      text = readFileSync(path.join(dir, `${name}.md`), 'utf8');
    } catch {
      throw ApplicationFailure.nonRetryable(`prompt "${name}" not found in ${dir}`, ErrorType.PromptError);
    }
    cache.set(key, text);
  }
  return text;
}

const MARKER = /^<!--\s*(user|part:\s*([a-z][a-z0-9-]*))\s*-->\s*$/m;

/** The template file `name`, taken apart once per process. */
export function loadParsed(name: string, dir = PROMPTS_DIR): TemplateFile {
  const key = `${dir}/${name}`;
  let file = parsedCache.get(key);
  if (!file) parsedCache.set(key, (file = parseTemplate(loadTemplate(name, dir), name)));
  return file;
}

/** Splits a template file at its `<!-- user -->` and `<!-- part: … -->` lines. */
export function parseTemplate(text: string, name = 'template'): TemplateFile {
  const pieces = text.split(new RegExp(MARKER.source, 'gm'));
  // split() with two groups: [before, marker, partName, text, marker, partName, text, …]
  const file: TemplateFile = { system: pieces[0]!.trim(), user: undefined, parts: {} };
  for (let i = 1; i < pieces.length; i += 3) {
    const [marker, part, body] = [pieces[i]!, pieces[i + 1], pieces[i + 2]!.trim()];
    if (marker === 'user') {
      if (file.user !== undefined) throw promptError(`prompt "${name}" has two "<!-- user -->" lines`);
      file.user = body;
    } else {
      if (file.parts[part!] !== undefined) throw promptError(`prompt "${name}" has two parts named "${part}"`);
      file.parts[part!] = body;
    }
  }
  return file;
}

/** The example answers a prompt file shows its model: each line of its system part that is a JSON object. */
export function promptExamples(name: string, dir = PROMPTS_DIR): Record<string, unknown>[] {
  return loadParsed(name, dir)
    .system.split('\n')
    .filter((line) => line.startsWith('{') && line.endsWith('}'))
    .flatMap((line) => {
      try {
        const value: unknown = JSON.parse(line);
        return value && typeof value === 'object' && !Array.isArray(value) ? [value as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
}

const VARIABLE = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g;
const SECTION_TAG = /\{\{\s*[#^/]\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g;
/** A section with no section inside it: sections are resolved from the innermost out. */
const INNERMOST_SECTION = /\{\{\s*([#^])\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}((?:(?!\{\{\s*[#^/])[\s\S])*?)\{\{\s*\/\s*\2\s*\}\}/g;

/** The variables a template names (`{{name}}` and section tags), each once. */
export function templateVariables(template: string): string[] {
  const names = [...template.matchAll(VARIABLE), ...template.matchAll(SECTION_TAG)].map((m) => m[1]!);
  return [...new Set(names)];
}

function promptError(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, ErrorType.PromptError);
}

const isOn = (v: VarValue) => (typeof v === 'string' ? v.length > 0 : Boolean(v));

/**
 * Fills a template: sections kept or left out by their variable, then variables replaced (through
 * `wrap`, which puts untrusted text in its block). Fails on a variable that was not given.
 */
export function renderTemplate(
  template: string,
  vars: Record<string, VarValue>,
  name = 'template',
  wrap: (key: string, value: string) => string = (_, value) => value,
): string {
  const missing = templateVariables(template).filter((key) => vars[key] === undefined);
  if (missing.length > 0)
    throw promptError(
      `prompt "${name}" needs ${missing.length === 1 ? 'variable' : 'variables'} ${missing.join(', ')} that ${wasWere(missing.length)} not given`,
    );
  let out = template;
  for (let before = ''; before !== out;) {
    before = out;
    out = out.replace(INNERMOST_SECTION, (_, kind: string, key: string, body: string) => (isOn(vars[key]!) === (kind === '#') ? body : ''));
  }
  if (new RegExp(SECTION_TAG.source).test(out)) throw promptError(`prompt "${name}" has a section tag without its pair`);
  return out.replace(VARIABLE, (_, key: string) => wrap(key, String(vars[key])));
}

/** Splits a template file into its system and user parts and fills both. */
export function renderTemplateFile(name: string, vars: Record<string, VarValue>, dir = PROMPTS_DIR): RenderedPrompt {
  return renderFile(name, vars, {}, dir);
}

function renderFile(name: string, vars: Record<string, VarValue>, labels: Partial<Record<string, string>>, dir: string): RenderedPrompt {
  const file = loadParsed(name, dir);
  if (file.user === undefined) throw promptError(`prompt "${name}" has no "<!-- user -->" section`);
  const wrap = wrapper(labels);
  return { system: renderTemplate(file.system, vars, name, wrap), user: renderTemplate(file.user, vars, name, wrap) };
}

/** Wraps untrusted text (user input, pages, search results) so the model reads it as data. */
export function untrusted(label: string, text: string): string {
  const safe = text.replaceAll(`</${label}>`, `<\\/${label}>`);
  return `<${label}>\n${safe}\n</${label}>`;
}

function wrapper(labels: Partial<Record<string, string>>): (key: string, value: string) => string {
  return (key, value) => {
    const label = labels[key];
    return label === undefined ? value : untrusted(label, value);
  };
}

/** The variables, checked by the prompt's or part's schema. */
function checked(def: { file: string; vars: AnyPrompt['vars'] }, vars: unknown, what: string): Record<string, VarValue> {
  const parsed = def.vars.safeParse(vars);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(variables)'}: ${i.message}`).join('; ');
    throw promptError(`prompt "${what}" got invalid variables: ${problems}`);
  }
  return parsed.data;
}

/** Renders a registered prompt: variables checked by its schema, untrusted ones wrapped. */
export function renderPrompt<P extends AnyPrompt>(def: P, vars: PromptVars<P>, dir = PROMPTS_DIR): RenderedPrompt {
  const values = checked(def, vars, def.file);
  const rendered = renderFile(def.file, values, def.untrusted, dir);
  const locale = typeof values.locale === 'string' ? values.locale : undefined;
  return { ...rendered, system: `${rendered.system}\n\n${dateLine(promptTime(), locale)}` };
}

/** Renders a declared part of a prompt file: variables checked by its schema, untrusted ones wrapped. */
export function renderPart<P extends AnyPart>(def: P, vars: PromptVars<P>, dir = PROMPTS_DIR): string {
  const name = `${def.file}#${def.part}`;
  const values = checked(def, vars, name);
  const template = loadParsed(def.file, dir).parts[def.part];
  if (template === undefined) throw promptError(`prompt "${def.file}" has no part "${def.part}"`);
  return renderTemplate(template, values, name, wrapper(def.untrusted));
}

/**
 * When the prompt is for: the time the workflow scheduled this call, as its history records it. It
 * is the same on every attempt (a retried call sends the same prompt), and no model has to guess
 * what "latest" or "this year" means. Outside an activity (tests, tools), now.
 */
export function promptTime(): number {
  try {
    return Context.current().info.scheduledTimestampMs;
  } catch {
    return Date.now();
  }
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** "Current date: Sunday, 2026-11-22 (UTC)." and the run's locale when the prompt has one. The day, not
 *  the time: every call of a role on one day then sends the same system message, which a provider's
 *  prefix cache reuses with what follows it (a minute in it made a retry a minute later start anew).
 *  (No toLocaleDateString: it builds an Intl formatter per call, a visible cost at every LLM call.) */
export function dateLine(ms: number, locale?: string): string {
  const d = new Date(ms);
  const weekday = WEEKDAYS[d.getUTCDay()]!;
  const stamp = `${d.toISOString().slice(0, 10)} (UTC)`;
  return renderPart(DATE_LINE, { weekday, stamp, locale: locale ?? '' });
}
