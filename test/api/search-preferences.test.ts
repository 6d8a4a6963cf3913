// A tenant's search preferences (GET/PUT /v1/search-preferences): the key decides the tenant, one
// tenant never sees another's, provider names must be configured ones, and a run's own
// options.searchProviders is checked the same way when it is submitted.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchPreferencesView } from '../../src/api/contract';
import { runClientCommand } from '../../src/cli/commands';
import type { Io } from '../../src/cli/io';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const ACME = 'k-acme-0123456789abcdef';
const GLOBEX = 'k-globex-0123456789abcdef';

describe.skipIf(!ready)(`search preferences (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${ACME}=acme-prefs,${GLOBEX}=globex-prefs`, SEARCH_PROVIDERS: 'searxng,wikipedia' } });
    await h.pool.query(`DELETE FROM search_preferences WHERE tenant IN ('acme-prefs', 'globex-prefs')`);
  });
  afterAll(async () => h?.close());

  it('needs a key', async () => {
    await request(h.app).get('/v1/search-preferences').expect(401);
    await request(h.app)
      .put('/v1/search-preferences')
      .send({ preferDomains: ['example.org'] })
      .expect(401);
  });

  it('answers the defaults until the tenant stores some, then what it stored; another tenant sees its own', async () => {
    const before = (await request(h.app).get('/v1/search-preferences').set(as(ACME)).expect(200)).body as SearchPreferencesView;
    expect(before).toEqual({ tenant: 'acme-prefs', preferDomains: [], avoidDomains: [], configuredProviders: ['searxng', 'wikipedia'] });

    const put = await request(h.app)
      .put('/v1/search-preferences')
      .set(as(ACME))
      .send({ providers: ['wikipedia'], preferDomains: [' IRENA.org ', 'iea.org', 'iea.org'], avoidDomains: ['content-farm.example'] })
      .expect(200);
    expect(put.body).toMatchObject({
      tenant: 'acme-prefs',
      providers: ['wikipedia'],
      preferDomains: ['irena.org', 'iea.org'],
      avoidDomains: ['content-farm.example'],
    });
    expect(Date.parse((put.body as SearchPreferencesView).updatedAt!)).not.toBeNaN();
    const after = await request(h.app).get('/v1/search-preferences').set(as(ACME)).expect(200);
    expect(after.body).toEqual(put.body);

    const other = await request(h.app).get('/v1/search-preferences').set(as(GLOBEX)).expect(200);
    expect(other.body).toEqual({
      tenant: 'globex-prefs',
      preferDomains: [],
      avoidDomains: [],
      configuredProviders: ['searxng', 'wikipedia'],
    });

    // A PUT replaces the whole: no providers is every configured one again.
    const cleared = await request(h.app).put('/v1/search-preferences').set(as(ACME)).send({ providers: null }).expect(200);
    expect(cleared.body).toMatchObject({ preferDomains: [], avoidDomains: [] });
    expect(cleared.body).not.toHaveProperty('providers');
    const { rows } = await h.pool.query(`SELECT tenant FROM search_preferences WHERE tenant IN ('acme-prefs', 'globex-prefs')`);
    expect(rows).toEqual([{ tenant: 'acme-prefs' }]);
  });

  it('refuses providers that are not configured, naming the configured ones, and malformed domains', async () => {
    const unknown = await request(h.app)
      .put('/v1/search-preferences')
      .set(as(GLOBEX))
      .send({ providers: ['searxng', 'brave'] })
      .expect(400);
    expect(unknown.body.error).toMatchObject({
      code: 'unknown_search_provider',
      details: { unknown: ['brave'], configured: ['searxng', 'wikipedia'] },
    });
    expect(unknown.body.error.message).toMatch(
      /providers names providers this server does not have \(brave\); configured: searxng, wikipedia/,
    );
    for (const body of [
      { preferDomains: ['https://irena.org/'] },
      { avoidDomains: ['irena.org/path'] },
      { preferDomains: ['irena.org'], avoidDomains: ['IRENA.org'] },
      { providers: [] },
      { blockDomains: ['irena.org'] },
    ]) {
      const res = await request(h.app).put('/v1/search-preferences').set(as(GLOBEX)).send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const { rows } = await h.pool.query(`SELECT tenant FROM search_preferences WHERE tenant = 'globex-prefs'`);
    expect(rows).toEqual([]);
  });

  it("checks a run's options.searchProviders against the configured ones before it starts", async () => {
    const refused = await request(h.app)
      .post('/v1/research')
      .set(as(ACME))
      .send({ question: 'How cheap is solar now?', options: { searchProviders: ['tavily'] } })
      .expect(400);
    expect(refused.body.error).toMatchObject({ code: 'unknown_search_provider', details: { unknown: ['tavily'] } });
    expect(refused.body.error.message).toMatch(/options\.searchProviders .*configured: searxng, wikipedia/);
    const started = await request(h.app)
      .post('/v1/research')
      .set(as(ACME))
      .send({ question: 'How cheap is solar now?', options: { searchProviders: ['wikipedia'] } })
      .expect(202);
    // The workflow writes the run's choice with its row, where the search activity reads it.
    const end = Date.now() + 15_000;
    let row: { search_providers: string[] | null } | undefined;
    while (!row?.search_providers && Date.now() < end) {
      row = (await h.pool.query('SELECT search_providers FROM research_runs WHERE id = $1', [started.body.id])).rows[0];
      if (!row?.search_providers) await new Promise((r) => setTimeout(r, 100));
    }
    expect(row?.search_providers).toEqual(['wikipedia']);
    await request(h.app).post(`/v1/research/${started.body.id}/cancel`).set(as(ACME)).expect(202);
  });

  it('is shown and set with deep-research search-prefs', async () => {
    const server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cli = async (...args: string[]) => {
      let out = '';
      let err = '';
      const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), ask: async () => undefined };
      const code = await runClientCommand('search-prefs', args, { api, key: GLOBEX }, io);
      return { code, out, err };
    };
    try {
      const set = await cli('set', '--provider', 'wikipedia', '--prefer', 'irena.org', '--avoid', 'farm.example');
      expect(set).toMatchObject({ code: 0, err: '' });
      expect(set.out).toMatch(
        /^tenant globex-prefs \(changed .*\)\n {2}providers: wikipedia\n {2}preferred domains: irena\.org\n {2}avoided domains: farm\.example\n$/,
      );
      const shown = await cli('--json');
      expect(JSON.parse(shown.out)).toMatchObject({ tenant: 'globex-prefs', providers: ['wikipedia'], preferDomains: ['irena.org'] });
      const refused = await cli('set', '--provider', 'brave');
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(
        /^error: providers names providers this server does not have \(brave\); configured: searxng, wikipedia \(400 unknown_search_provider\)/,
      );
      const cleared = await cli('set');
      expect(cleared.out).toMatch(/providers: all configured \(searxng, wikipedia\)/);
    } finally {
      server.close();
    }
  });
});
