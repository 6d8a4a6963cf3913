// Prompt templates live in prompts/<name>.md and are rendered only here, inside activities.
// A template is a system part and, after a line `<!-- user -->`, a user part; `{{name}}` is a
// variable. Variables are checked against the prompt's zod schema, a missing one is an error
// (never an empty string), and untrusted ones are wrapped in delimited blocks here and only here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { PROMPTS_DIR } from '../../infra/paths';
import type { AnyPrompt, PromptVars } from './prompts';

export interface RenderedPrompt {
  system: string;
  user: string;
}

const cache = new Map<string, string>();

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

/** The `{{name}}` placeholders of a template, each once. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)].map((m) => m[1]!))];
}

export function renderTemplate(template: string, vars: Record<string, string | number>, name = 'template'): string {
  const missing = new Set<string>();
  const out = template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, key: string) => {
    const v = vars[key];
    if (v === undefined) {
      missing.add(key);
      return '';
    }
    return String(v);
  });
  if (missing.size > 0) {
    throw ApplicationFailure.nonRetryable(
      `prompt "${name}" needs variable(s) ${[...missing].join(', ')} that were not given`,
      ErrorType.PromptError,
    );
  }
  return out;
}

/** Splits a template file into its system and user parts and fills both. */
export function renderTemplateFile(name: string, vars: Record<string, string | number>, dir = PROMPTS_DIR): RenderedPrompt {
  const text = loadTemplate(name, dir);
  const [systemPart, userPart] = text.split(/^<!--\s*user\s*-->\s*$/m);
  if (userPart === undefined) {
    throw ApplicationFailure.nonRetryable(`prompt "${name}" has no "<!-- user -->" section`, ErrorType.PromptError);
  }
  return {
    system: renderTemplate(systemPart!.trim(), vars, name),
    user: renderTemplate(userPart.trim(), vars, name),
  };
}

/** Wraps untrusted text (user input, pages, search results) so the model reads it as data. */
export function untrusted(label: string, text: string): string {
  const safe = text.replaceAll(`</${label}>`, `<\\/${label}>`);
  return `<${label}>\n${safe}\n</${label}>`;
}

/** Renders a registered prompt: variables checked by its schema, untrusted ones wrapped. */
export function renderPrompt<P extends AnyPrompt>(def: P, vars: PromptVars<P>, dir = PROMPTS_DIR): RenderedPrompt {
  const parsed = def.vars.safeParse(vars);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(variables)'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`prompt "${def.file}" got invalid variables: ${problems}`, ErrorType.PromptError);
  }
  const values = { ...(parsed.data as Record<string, string | number>) };
  for (const [name, label] of Object.entries(def.untrusted as Record<string, string>)) {
    values[name] = untrusted(label, String(values[name]));
  }
  const rendered = renderTemplateFile(def.file, values, dir);
  const locale = typeof values.locale === 'string' ? values.locale : undefined;
  return { ...rendered, system: `${rendered.system}\n\n${dateLine(promptTime(), locale)}` };
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

/** "Current date and time: Sunday, 2026-11-22 12:34 UTC." and the run's locale when the prompt has one.
 *  (No toLocaleDateString: it builds an Intl formatter per call, a visible cost at every LLM call.) */
export function dateLine(ms: number, locale?: string): string {
  const d = new Date(ms);
  const weekday = WEEKDAYS[d.getUTCDay()]!;
  const stamp = `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
  return `Current date and time: ${weekday}, ${stamp}.${locale ? ` The user's locale: ${locale}.` : ''}`;
}
