// Prompt templates live in prompts/<name>.md and are rendered only here, inside activities.
// A template is a system part and, after a line `<!-- user -->`, a user part; `{{name}}` is a
// variable and a missing one is an error, never an empty string.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../shared/errors';
import { PROMPTS_DIR } from '../infra/paths';

export interface RenderedPrompt {
  system: string;
  user: string;
}

const cache = new Map<string, string>();

function load(name: string, dir: string): string {
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

export function renderPrompt(name: string, vars: Record<string, string | number>, dir = PROMPTS_DIR): RenderedPrompt {
  const text = load(name, dir);
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
