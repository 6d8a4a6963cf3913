// Renders the configuration reference in docs/configuration.md from the configuration's areas
// (src/config/<area>.ts, and each search provider's own settings): a section per area, each
// variable's default from its schema and its meaning from its .describe(), so the table cannot
// drift from the code. `--check` only compares (test/unit/docs.test.ts does too).
// A description is Markdown; its relative links are relative to docs/.
//
//   node bin/run-ts.mjs scripts/config-reference.ts [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { AREAS } from '../src/config';
import { LLM_ROLES } from '../src/shared/constants';

export const CONFIG_DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
export const REGENERATE = 'node bin/run-ts.mjs scripts/config-reference.ts';
const START = '<!-- config-reference:start (generated from src/config/ by scripts/config-reference.ts; do not edit) -->';
const END = '<!-- config-reference:end -->';

export interface Variable {
  name: string;
  /** Its area's place in AREAS: the section it is listed in. */
  section: number;
  /** The schema's default, if it has one (a computed default is in the description). */
  default: unknown;
  description: string | undefined;
}

/** Every variable the configuration reads, area by area, each in its area's order. */
export function schemaVariables(): Variable[] {
  return AREAS.flatMap((area, section) =>
    Object.entries(area.settings as z.ZodRawShape).map(([name, schema]) => ({
      name,
      section,
      default: defaultOf(schema),
      description: (schema as z.ZodType).description,
    })),
  );
}

function defaultOf(schema: z.core.$ZodType): unknown {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; in?: z.core.$ZodType };
  if (def.type === 'default') return def.defaultValue;
  if (def.type === 'pipe' && def.in) return defaultOf(def.in);
  return undefined;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const renderDefault = (v: unknown) => (v === undefined || v === '' ? '–' : `\`${String(v)}\``);

/** The generated part of docs/configuration.md, markers included. */
export function renderReference(): string {
  const vars = schemaVariables();
  const undescribed = vars.filter((v) => !v.description).map((v) => v.name);
  if (undescribed.length) throw new Error(`no .describe() for ${undescribed.join(', ')}`);

  // `<NAME>_<ROLE>` variables with one description and default become one `<NAME>_<ROLE>` row.
  const suffixes = LLM_ROLES.map((r) => `_${r.toUpperCase()}`);
  const rows: Variable[] = [];
  const folded = new Set<string>();
  vars.forEach((v) => {
    if (folded.has(v.name)) return;
    const suffix = suffixes.find((s) => v.name.endsWith(s));
    const stem = suffix ? v.name.slice(0, -suffix.length) : undefined;
    const family = stem ? suffixes.map((s) => vars.find((w) => w.name === stem + s)) : [];
    if (stem && family.every((w) => w && w.description === v.description && w.default === v.default)) {
      for (const w of family) folded.add(w!.name);
      rows.push({ ...v, name: `${stem}_<ROLE>` });
    } else rows.push(v);
  });

  const out = [START];
  AREAS.forEach((area, section) => {
    const mine = rows.filter((r) => r.section === section);
    if (!mine.length) return;
    out.push('', `### ${area.title}`, '', '| variable | default | meaning |', '| --- | --- | --- |');
    for (const r of mine) out.push(`| \`${r.name}\` | ${cell(renderDefault(r.default))} | ${cell(r.description!)} |`);
  });
  out.push('', END);
  return out.join('\n');
}

/** The part of a document between the markers (markers included), or undefined. */
export function currentReference(doc: string): string | undefined {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  return start < 0 || end < start ? undefined : doc.slice(start, end + END.length);
}

function main(check: boolean): number {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  const current = currentReference(doc);
  if (current === undefined) {
    console.error(`${path.relative(process.cwd(), CONFIG_DOC)} has no "${START}" … "${END}" block`);
    return 1;
  }
  const fresh = renderReference();
  if (check) {
    if (current === fresh) return 0;
    console.error(`docs/configuration.md is out of date with the configuration's schema; run: ${REGENERATE}`);
    return 1;
  }
  if (current !== fresh)
    writeFileSync(
      CONFIG_DOC,
      doc.replace(current, () => fresh),
    );
  console.log(current === fresh ? 'docs/configuration.md is up to date' : 'docs/configuration.md updated');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.includes('--check'));
}
