// Open mode on a laptop (src/api/host-guard.ts): without keys the API answers only to loopback Host
// names (DNS rebinding gets 421) and refuses a browser's state-changing request from another site
// (403); with keys a proxy's Host and another origin pass unless API_ALLOWED_HOSTS is set. The
// checks sit before the routes: a request they let through reaches the router (404 for a path that
// does not exist, 401 without a key), one they stop never does.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import type { ResearchService } from '../../src/api/research-service';
import { createLogger } from '../../src/infra/logger';
import { testConfig } from '../support/harness';

const KEY = 'k-host-guard-0123456789';

function app(opts: { open: boolean; env?: Record<string, string> }) {
  const config = testConfig(undefined, opts.env ?? {});
  return createApp({
    research: {} as ResearchService,
    events: { after: async () => [] },
    auth: { envKeys: opts.open ? [] : [{ key: KEY, tenant: 'guarded' }], table: { ownerOf: async () => undefined }, open: opts.open },
    allowedHosts: config.api.allowedHosts,
    rateLimits: config.api.rateLimits,
    readiness: {},
    log: createLogger('error'),
  });
}

const open = app({ open: true });

describe('open mode: the Host header', () => {
  it.each(['localhost:3000', '127.0.0.1:3000', '127.0.0.1', '[::1]:3000', 'LOCALHOST:8080', 'app.localhost:3000'])(
    'answers to %s',
    async (host) => {
      const res = await request(open).get('/v1/nope').set('Host', host).expect(404);
      expect(res.body.error.code).toBe('not_found');
    },
  );

  it.each(['rebind.attacker.example:3000', 'attacker.example', '10.0.0.5:3000', '127.0.0.1.nip.io:3000', 'localhost.attacker.example'])(
    'refuses %s with 421 before any route, metrics or the page',
    async (host) => {
      for (const path of ['/v1/research', '/v1/research/research-1/cancel', '/metrics', '/', '/v1/openapi.json']) {
        const method = path.endsWith('/cancel') ? 'post' : 'get';
        const res = await request(open)[method](path).set('Host', host);
        expect({ path, status: res.status }).toEqual({ path, status: 421 });
        expect(res.body.error).toMatchObject({ code: 'host_not_allowed', message: expect.stringContaining('API_ALLOWED_HOSTS') });
      }
    },
  );

  it('answers health checks whatever the Host', async () => {
    await request(open).get('/healthz').set('Host', 'attacker.example').expect(200);
  });

  it('answers to the names of API_ALLOWED_HOSTS, a name without a port on any port', async () => {
    const listed = app({ open: true, env: { API_ALLOWED_HOSTS: 'research.lan, box.lan:8080' } });
    await request(listed).get('/v1/nope').set('Host', 'research.lan:3000').expect(404);
    await request(listed).get('/v1/nope').set('Host', 'box.lan:8080').expect(404);
    await request(listed).get('/v1/nope').set('Host', 'box.lan:3000').expect(421);
    await request(listed).get('/v1/nope').set('Host', 'other.lan').expect(421);
  });
});

describe('open mode: cross-site requests that change state', () => {
  const host = '127.0.0.1:3000';

  it.each([
    ['an Origin of another site', { Origin: 'http://attacker.example' }],
    ['an Origin of another local server', { Origin: 'http://localhost:8080' }],
    ['an Origin on another port of this name', { Origin: 'http://127.0.0.1:8080' }],
    ['an opaque Origin', { Origin: 'null' }],
    ['Sec-Fetch-Site: cross-site without an Origin', { 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'Sec-Fetch-Site': 'same-site', Origin: `http://${host}` }],
  ])('refuses a POST, PUT, PATCH and DELETE with %s (403)', async (_what, headers) => {
    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      const res = await request(open)[method]('/v1/research/research-1/cancel').set('Host', host).set(headers);
      expect({ method, status: res.status }).toEqual({ method, status: 403 });
      expect(res.body.error.code).toBe('cross_site');
    }
  });

  it.each([
    ['its own page', { Origin: `http://${host}`, 'Sec-Fetch-Site': 'same-origin' }],
    ['a request typed in the address bar', { 'Sec-Fetch-Site': 'none' }],
    ['a client outside a browser (curl, the CLI)', {}],
  ])('lets %s through', async (_what, headers) => {
    const res = await request(open).post('/v1/nope').set('Host', host).set(headers).expect(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('takes a POST from a page whose host is listed in API_ALLOWED_HOSTS (behind a proxy, the page is on the public name)', async () => {
    const listed = app({ open: true, env: { API_ALLOWED_HOSTS: 'localhost:6274' } });
    const from = (origin: string) =>
      request(listed).post('/v1/nope').set('Host', host).set('Origin', origin).set('Sec-Fetch-Site', 'cross-site');
    expect((await from('http://localhost:6274')).status).toBe(404);
    expect((await from('http://localhost:6275')).status).toBe(403);
  });

  it('lets a cross-site GET through (a page cannot read the answer without CORS, which the API does not send)', async () => {
    const res = await request(open).get('/v1/nope').set('Host', host).set('Origin', 'http://attacker.example').expect(404);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('with keys', () => {
  const keyed = app({ open: false });
  const listed = app({ open: false, env: { API_ALLOWED_HOSTS: 'research.example.com' } });

  it('takes any Host and origin unless API_ALLOWED_HOSTS is set: the key is the credential, and a proxy may put any Host in front', async () => {
    await request(keyed).get('/v1/nope').set('Host', 'internal-lb:3000').set('authorization', `Bearer ${KEY}`).expect(404);
    await request(keyed)
      .post('/v1/nope')
      .set('Host', 'internal-lb:3000')
      .set('Origin', 'https://research.example.com')
      .set('authorization', `Bearer ${KEY}`)
      .expect(404);
    await request(keyed).get('/v1/research').set('Host', 'anything.example').expect(401);
  });

  it('checks the Host against API_ALLOWED_HOSTS (and loopback names) when it is set', async () => {
    await request(listed).get('/v1/nope').set('Host', 'research.example.com').set('authorization', `Bearer ${KEY}`).expect(404);
    await request(listed).get('/v1/nope').set('Host', 'localhost:3000').set('authorization', `Bearer ${KEY}`).expect(404);
    const res = await request(listed).get('/v1/nope').set('Host', 'attacker.example').set('authorization', `Bearer ${KEY}`).expect(421);
    expect(res.body.error.code).toBe('host_not_allowed');
  });

  // The MCP endpoint's tools call the API back on the address the request came in on, with that
  // address as Host: an address, unlike a name, cannot be rebound to this machine.
  const lan = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  it.skipIf(!lan)(
    `answers to the address a request came in on (${lan ?? 'no address but loopback here'}) though it is not listed`,
    async () => {
      const server = http.createServer(listed);
      await new Promise<void>((r) => server.listen(0, lan, r));
      try {
        const port = (server.address() as AddressInfo).port;
        // http.request, not fetch: fetch does not let a caller set Host.
        const get = (host: string) =>
          new Promise<number>((resolve, reject) =>
            http
              .get({ host: lan, port, path: '/v1/nope', headers: { host, authorization: `Bearer ${KEY}` } }, (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
              })
              .on('error', reject),
          );
        expect(await get(`${lan}:${port}`)).toBe(404);
        expect(await get('attacker.example')).toBe(421);
      } finally {
        server.close();
      }
    },
  );
});
