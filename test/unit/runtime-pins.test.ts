// The runtime and SDK the service ships on: one Node LTS named once (.node-version) and used by
// engines, the Dockerfile and CI; every @temporalio/* package at one exact version, installed as
// declared (SDK packages of different versions must not mix in one process).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/spawn';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('runtime pins', () => {
  const nodeVersion = read('.node-version').trim();
  const major = Number(nodeVersion.split('.')[0]);

  it('names one even-numbered (LTS) Node in .node-version, and engines, the Dockerfile and CI use it', () => {
    expect(nodeVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    const engines = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(pkg.engines.node);
    expect(engines, pkg.engines.node).not.toBeNull();
    expect(Number(engines![1])).toBe(major);
    expect(read('Dockerfile')).toMatch(new RegExp(`^FROM node:${nodeVersion.replaceAll('.', '\\.')}-`, 'm'));
    expect(read('.ci/run')).toMatch(/\.node-version/);
  });

  it('runs the tests on that Node', () => {
    // CI puts .tools/node-<version>/bin first on PATH; a laptop may run another Node.
    if (process.env.CI === 'true') expect(process.version).toBe(`v${nodeVersion}`);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
  });

  it('pins every @temporalio package to one exact version, and that version is what is installed', () => {
    const temporal = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }).filter(([name]) => name.startsWith('@temporalio/'));
    expect(temporal.length).toBeGreaterThanOrEqual(8);
    const versions = new Set(temporal.map(([, v]) => v));
    expect([...versions], 'one version for every @temporalio/* package').toHaveLength(1);
    const [version] = versions;
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    for (const [name] of temporal) {
      const installed = JSON.parse(read(`node_modules/${name}/package.json`)) as { version: string };
      expect(installed.version, name).toBe(version);
    }
  });
});
