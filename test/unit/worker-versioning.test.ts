// Worker Versioning settings: which workers are versioned, what build id they report, the behaviour
// each workflow type declares, and what a worker says about the deployment's routing.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { describeRouting } from '../../src/infra/deployment';
import { codeBuildId } from '../../src/infra/workflow-bundle';
import { ConfigError } from '../../src/shared/errors';
import { workerVersion } from '../../src/worker';
import * as workflows from '../../src/workflows/index';
import { VERSIONING_BEHAVIORS } from '../../src/workflows/versioning';

describe('worker versioning', () => {
  it('is off without a build id, and names the deployment and build with one', () => {
    expect(loadConfig({}).temporal.deployment).toBeUndefined();
    expect(workerVersion(loadConfig({}))).toBeUndefined();
    expect(workerVersion(loadConfig({ TEMPORAL_WORKER_BUILD_ID: '2026.11.25-a1b2c3' }))).toEqual({
      deploymentName: 'deep-research',
      buildId: '2026.11.25-a1b2c3',
    });
    expect(workerVersion(loadConfig({ TEMPORAL_WORKER_BUILD_ID: 'v2', TEMPORAL_DEPLOYMENT_NAME: 'research-eu' }))).toEqual({
      deploymentName: 'research-eu',
      buildId: 'v2',
    });
  });

  it('refuses names the server refuses, saying which', () => {
    expect(() => loadConfig({ TEMPORAL_DEPLOYMENT_NAME: 'deep.research', TEMPORAL_WORKER_BUILD_ID: 'v1' })).toThrow(ConfigError);
    expect(() => loadConfig({ TEMPORAL_DEPLOYMENT_NAME: 'deep:research' })).toThrow(/TEMPORAL_DEPLOYMENT_NAME/);
    expect(() => loadConfig({ TEMPORAL_WORKER_BUILD_ID: 'a/b' })).toThrow(/TEMPORAL_WORKER_BUILD_ID/);
  });

  it("'auto' is a hash of the code: the same for the same code, stable across calls", () => {
    const v = workerVersion(loadConfig({ TEMPORAL_WORKER_BUILD_ID: 'auto' }));
    expect(v?.buildId).toMatch(/^code-[0-9a-f]{16}$/);
    expect(v?.buildId).toBe(codeBuildId());
  });

  it('declares a behaviour for every workflow type the worker registers', () => {
    const types = Object.keys(workflows).sort();
    expect(types.length).toBeGreaterThanOrEqual(6);
    expect(Object.keys(VERSIONING_BEHAVIORS).sort()).toEqual(types);
    // The run is pinned and moves to a newer build by continuing as new at its long waits; its
    // steps finish on the build they started on; the tenant's queue, which never ends, upgrades.
    expect(VERSIONING_BEHAVIORS.researchWorkflow).toBe('PINNED');
    expect(VERSIONING_BEHAVIORS.researcherWorkflow).toBe('PINNED');
    expect(VERSIONING_BEHAVIORS.admissionWorkflow).toBe('AUTO_UPGRADE');
  });

  it('says whether new runs reach this version, and the command when they do not', () => {
    const me = { deploymentName: 'deep-research', buildId: 'B' };
    expect(describeRouting(me, { current: 'B', ramping: undefined })).toMatchObject({
      ok: true,
      line: expect.stringMatching(/current version/),
    });
    const behind = describeRouting(me, { current: 'A', ramping: { buildId: 'B', percentage: 10 } });
    expect(behind.ok).toBe(false);
    expect(behind.line).toMatch(/new runs still start on build A \(10% on B\)/);
    expect(behind.line).toContain('temporal worker deployment set-current-version --deployment-name deep-research --build-id B');
    expect(describeRouting(me, undefined).line).toMatch(/no current version yet/);
  });
});
