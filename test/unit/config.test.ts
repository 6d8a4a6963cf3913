import { describe, expect, it } from 'vitest';
import { loadConfig, llmConfigured } from '../../src/config';
import { ConfigError } from '../../src/shared/errors';
import { BUILT_IN_PRICES } from '../../src/config/prices';

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.temporal).toMatchObject({ address: undefined, namespace: 'default', taskQueue: 'deep-research', port: 7233, uiPort: 8233 });
    expect(c.api).toEqual({
      host: '127.0.0.1',
      port: 3000,
      keys: [],
      allowedHosts: [],
      rateLimits: { submits: 30, reads: 1_200, uploads: 60 },
      quotas: { schedules: 20, collections: 50, documents: 5_000, storedBytes: 2_000_000_000, streams: 20, runsInFlight: 100 },
      runMaxTokens: 400_000,
      minOutage: '1m',
      fairness: { weights: {}, priorities: {}, maxRuns: 0 },
      chatWaitMs: 300_000,
    });
    expect(c.database.url).toBeUndefined();
    expect(c.llm.models.planner).toBe('gpt-4o-mini');
    expect(llmConfigured(c)).toBe(false);
  });

  it('takes a model per role, falling back to LLM_MODEL', () => {
    const c = loadConfig({ LLM_MODEL: 'base', LLM_MODEL_JUDGE: 'small', OPENAI_API_KEY: 'sk-x' });
    expect(c.llm.models).toMatchObject({ judge: 'small', planner: 'base', reporter: 'base' });
    expect(llmConfigured(c)).toBe(true);
  });

  it('treats empty strings as unset', () => {
    const c = loadConfig({ OPENAI_BASE_URL: '', DATABASE_URL: ' ' });
    expect(c.llm.baseUrl).toBeUndefined();
    expect(c.database.url).toBeUndefined();
  });

  it('parses the price table, over the built-in one', () => {
    const prices = loadConfig({ LLM_PRICES: 'gpt-4o=3/12, small=0.1/0.4' }).llm.prices;
    expect(prices).toMatchObject({
      'gpt-4o': { input: 3, output: 12 },
      small: { input: 0.1, output: 0.4 },
      'gpt-4o-mini': { input: 0.15, output: 0.6 },
    });
    expect(loadConfig({}).llm.prices).toEqual(BUILT_IN_PRICES);
  });

  it('names every bad variable and the reason', () => {
    let err: unknown;
    try {
      loadConfig({ API_PORT: 'eighty', OPENAI_BASE_URL: 'not a url', DATABASE_URL: 'mysql://x', LLM_PRICES: 'gpt=cheap' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.map((i) => i.variable).sort();
    expect(issues).toEqual(['API_PORT', 'DATABASE_URL', 'LLM_PRICES', 'OPENAI_BASE_URL']);
    expect((err as Error).message).toMatch(/API_PORT: .*number/i);
    expect((err as Error).message).toMatch(/DATABASE_URL: expected postgres:\/\//);
    expect((err as Error).message).toMatch(/LLM_PRICES: "gpt=cheap" is not model=input\/output/);
  });
});

describe('API_KEYS', () => {
  it('reads key=tenant pairs', () => {
    const c = loadConfig({ API_KEYS: 'k-0123456789abcdef=acme, k-fedcba9876543210=globex' });
    expect(c.api.keys).toEqual([
      { key: 'k-0123456789abcdef', tenant: 'acme' },
      { key: 'k-fedcba9876543210', tenant: 'globex' },
    ]);
  });

  it('names the bad entry without printing any key', () => {
    let message = '';
    try {
      loadConfig({ API_KEYS: 'k-0123456789abcdef=acme,short=globex' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/API_KEYS: entry 2 is not key=tenant/);
    expect(message).not.toMatch(/short|0123456789abcdef/);
  });

  it('reads the fair-sharing settings per tenant, and names a bad entry', () => {
    const c = loadConfig({ TENANT_WEIGHTS: 'acme=3, globex=0.5', TENANT_PRIORITIES: 'acme=1', TENANT_MAX_RUNS: '4' });
    expect(c.api.fairness).toEqual({ weights: { acme: 3, globex: 0.5 }, priorities: { acme: 1 }, maxRuns: 4 });
    expect(() => loadConfig({ TENANT_PRIORITIES: 'acme=9' })).toThrow(/TENANT_PRIORITIES: "acme=9" is not tenant=priority \(1-5\)/);
    expect(() => loadConfig({ TENANT_WEIGHTS: 'acme' })).toThrow(/TENANT_WEIGHTS: "acme" is not tenant=weight/);
    expect(loadConfig({ SEARCH_RATE_LIMITS: 'searxng=2.5' }).search.rateLimits.searxng).toBe(2.5);
    expect(() => loadConfig({ SEARCH_RATE_LIMITS: 'searxng=0' })).toThrow(
      /SEARCH_RATE_LIMITS: "searxng=0" is not provider=requestsPerSecond/,
    );
  });
});
