// The documentation stays true to the code and to itself: the configuration reference is the one
// the env schema renders, every variable has a description, every relative link resolves inside
// the repository, and the README stays a front page.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC, currentReference, REGENERATE, renderReference, schemaVariables } from '../../scripts/config-reference';
import { ROOT } from '../support/spawn';

const DOCS = path.join(ROOT, 'docs');
const pages = [
  'README.md',
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f)),
];

/** Link targets of a Markdown text, outside code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const definitions = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  const autolinks = [...prose.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((m) => m[1]!);
  return [...inline, ...definitions, ...autolinks];
}

/** Why a link may not stay, or undefined when it is fine. */
function badLink(page: string, target: string): string | undefined {
  if (target.startsWith('#')) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (!/^https?:\/\//i.test(target)) return 'only http(s) links may leave the repository';
    const host = new URL(target).hostname.replace(/^\[|\]$/g, '');
    const local =
      host === 'localhost' ||
      host === '::1' ||
      /\.(local|internal|localhost)$/.test(host) ||
      /^(127|10|0)\.|^192\.168\.|^169\.254\.|^172\.(1[6-9]|2\d|3[01])\./.test(host);
    return local ? 'a link to a machine of its own is not a public site (write the address as code)' : undefined;
  }
  if (target.startsWith('/')) return 'an absolute path is not in the repository';
  const file = path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(target.replace(/[#?].*$/, '')));
  const inside = path.relative(ROOT, file);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'leaves the repository';
  return existsSync(file) ? undefined : 'no such file';
}

describe('docs', () => {
  it('docs/configuration.md holds the reference the env schema renders', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    const current = currentReference(doc);
    expect(current, 'docs/configuration.md has lost its generated block').toBeDefined();
    expect(current === renderReference(), `docs/configuration.md is out of date with src/config.ts; run: ${REGENERATE}`).toBe(true);
  });

  it('every variable the env schema reads has a description', () => {
    const vars = schemaVariables();
    expect(vars.length).toBeGreaterThan(100);
    const undescribed = vars.filter((v) => !v.description?.trim()).map((v) => v.name);
    expect(undescribed, 'add .describe("…") to these fields in src/config.ts').toEqual([]);
    // The reference lists each one (role variables as one <NAME>_<ROLE> row).
    const reference = renderReference();
    const missing = vars.map((v) => v.name.replace(/_(COORDINATOR|PLANNER|RESEARCHER|CODER|JUDGE|REPORTER)$/, '_<ROLE>'));
    expect(missing.filter((name) => !reference.includes(`| \`${name}\` |`))).toEqual([]);
  });

  it('finds the links it checks, and refuses links that leave the repository', () => {
    expect(linkTargets('[a](docs/x.md#y) `[b](no.md)` <https://temporal.io>\n```\n[c](no.md)\n```\n')).toEqual([
      'docs/x.md#y',
      'https://temporal.io',
    ]);
    expect(badLink('README.md', '../shared/SPEC.md')).toBe('leaves the repository');
    expect(badLink('README.md', 'http://localhost:8233')).toMatch(/public/);
    expect(badLink('README.md', 'file:///etc/passwd')).toMatch(/http/);
    expect(badLink('docs/http-api.md', 'configuration.md#llm')).toBeUndefined();
  });

  it.each(pages)('every link in %s resolves inside the repository or to a public site', (page) => {
    const text = readFileSync(path.join(ROOT, page), 'utf8');
    const bad = linkTargets(text).flatMap((target) => {
      const why = badLink(page, target);
      return why ? [`${target}: ${why}`] : [];
    });
    expect(bad).toEqual([]);
  });

  it('README.md stays a front page (at most 220 lines; the rest belongs in docs/)', () => {
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(220);
  });
});
