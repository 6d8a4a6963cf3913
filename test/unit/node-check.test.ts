// The Node version check at start (bin/node-check.mjs): an older Node is refused with one line
// that says what to install; the supported ones pass.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without types, run before tsx is registered
import { nodeProblem, wantedNode } from '../../bin/node-check.mjs';

const check = nodeProblem as (version: string, wanted?: string) => string | undefined;

describe('the Node version check', () => {
  it("reads the minimum from package.json's engines", () => {
    expect((wantedNode as () => string)()).toMatch(/^24\.\d+\.\d+$/);
  });

  it('refuses an older Node with the remedy in one line', () => {
    expect(check('20.20.2', '24.11.0')).toBe(
      'deep-research: Node 20.20.2 is older than the 24.11.0 it needs: install Node 24 (`nvm install 24`, or the version in .node-version) and run it again.',
    );
    expect(check('24.10.9', '24.11.0')).toMatch(/^deep-research: Node 24\.10\.9 is older than the 24\.11\.0/);
  });

  it('passes the minimum and anything newer, this Node included', () => {
    for (const v of ['24.11.0', '24.11.1', '24.21.0', '25.0.0']) expect(check(v, '24.11.0')).toBeUndefined();
    expect(check(process.versions.node)).toBeUndefined();
    const help = spawnSync(process.execPath, ['bin/deep-research.mjs', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stderr).toBe('');
  });
});
