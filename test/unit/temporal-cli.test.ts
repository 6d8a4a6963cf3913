import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTemporalCli, searchAttributeArgs } from '../../src/infra/temporal-cli';

describe('findTemporalCli', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-'));
  const fake = path.join(dir, 'temporal');
  writeFileSync(fake, '#!/bin/sh\necho fake\n');
  chmodSync(fake, 0o755);

  it('prefers TEMPORAL_CLI_PATH', () => {
    expect(findTemporalCli({ explicitPath: fake, envPath: '', install: false })).toEqual({ path: fake, source: 'TEMPORAL_CLI_PATH' });
  });

  it('rejects a TEMPORAL_CLI_PATH that is not executable', () => {
    expect(() => findTemporalCli({ explicitPath: path.join(dir, 'missing'), envPath: '', install: false })).toThrow(/not an executable/);
  });

  it('then looks on PATH', () => {
    expect(findTemporalCli({ envPath: `/nonexistent${path.delimiter}${dir}`, install: false })).toEqual({ path: fake, source: 'PATH' });
  });

  it('registers every search attribute with its type', () => {
    expect(searchAttributeArgs()).toEqual([
      '--search-attribute',
      'ResearchStatus=Keyword',
      '--search-attribute',
      'ResearchPhase=Keyword',
      '--search-attribute',
      'ResearchTenant=Keyword',
      '--search-attribute',
      'ResearchStepCount=Int',
      '--search-attribute',
      'ResearchQuestion=Text',
    ]);
  });
});
