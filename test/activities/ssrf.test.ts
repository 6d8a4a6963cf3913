// The crawler's SSRF guard and limits against real sockets on loopback.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetcher, DEFAULT_ALLOWED_TYPES, type FetchLimits } from '../../src/activities/crawl/safe-fetch';
import { addressProblem } from '../../src/activities/crawl/ssrf';
import { FixtureSite } from '../support/fixture-site';

const site = new FixtureSite();
let port: number;
const limits = (over: Partial<FetchLimits> = {}): FetchLimits => ({
  allowHosts: [],
  allowedPorts: [80, 443, port],
  maxBytes: 1_000_000,
  connectTimeoutMs: 2_000,
  totalTimeoutMs: 1_500,
  maxRedirects: 5,
  userAgent: 'deep-research-test',
  allowedTypes: DEFAULT_ALLOWED_TYPES,
  ...over,
});

beforeAll(async () => {
  // Compressed once, not at each request: on a loaded machine that took most of the fetch's time limit.
  const z = gzipSync(Buffer.alloc(50_000_000));
  site
    .route('/big', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.alloc(3_000_000, 'a'));
    })
    .route('/bomb', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': z.length });
      res.end(z);
    })
    .route('/drip', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('x'), 200);
      res.on('close', () => clearInterval(t));
    })
    .route('/binary', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from([0, 1, 2, 3]));
    })
    .route('/to-loopback', (_req, res) => {
      res.writeHead(302, { location: `http://localhost:${port}/index.html` }).end();
    })
    .route('/loop', (_req, res) => {
      res.writeHead(302, { location: '/loop' }).end();
    });
  await site.start();
  port = Number(new URL(site.url).port);
});
afterAll(() => site.close());

describe('addressProblem', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /linkLocal/],
    ['100.64.0.1', /carrierGradeNat/],
    ['0.0.0.0', /unspecified/],
    ['::1', /loopback/],
    ['fd00::1', /uniqueLocal/],
    ['fe80::1', /linkLocal/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:10.0.0.1', /private/],
    ['224.0.0.1', /multicast/],
  ])('blocks %s', (ip, reason) => {
    expect(addressProblem(ip)).toMatch(reason);
  });

  it('lets public addresses through', () => {
    expect(addressProblem('93.184.216.34')).toBeUndefined();
    expect(addressProblem('2606:4700:4700::1111')).toBeUndefined();
  });
});

describe('safe fetcher', () => {
  it.each([
    ['loopback', () => `http://127.0.0.1:${port}/index.html`, /127\.0\.0\.1 is a loopback address/],
    ['"0"', () => `http://0:${port}/`, /0\.0\.0\.0 is a unspecified address/],
    ['short form 127.1', () => `http://127.1:${port}/`, /127\.0\.0\.1 is a loopback/],
    ['octal 0177.0.0.1', () => `http://0177.0.0.1:${port}/`, /127\.0\.0\.1 is a loopback/],
    ['decimal 2130706433', () => `http://2130706433:${port}/`, /127\.0\.0\.1 is a loopback/],
    ['IPv6 loopback', () => `http://[::1]:${port}/`, /::1 is a loopback/],
    ['IPv4-mapped IPv6', () => `http://[::ffff:127.0.0.1]:${port}/`, /loopback/],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /linkLocal/],
    ['private 10/8', () => 'http://10.0.0.1/', /private/],
    ['IPv6 ULA', () => 'http://[fd12:3456::1]/', /uniqueLocal/],
    ['a name that resolves to loopback', () => `http://localhost:${port}/index.html`, /localhost resolves to 127\.0\.0\.1 is a loopback/],
    ['file scheme', () => 'file:///etc/passwd', /scheme file: is not allowed/],
    ['gopher scheme', () => 'gopher://example.com/', /scheme gopher: is not allowed/],
    ['port outside the allow list', () => 'http://example.com:8080/', /port 8080 is not allowed/],
    ['credentials in the URL', () => 'http://user:pw@example.com/', /credentials/],
  ])('blocks %s', async (_name, url, reason) => {
    const f = createSafeFetcher(limits());
    const err = await f.get(url()).catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ name: 'BlockedError' });
    expect((err as Error).message).toMatch(reason);
    expect(site.hits).not.toContain('/index.html');
    await f.close();
  });

  describe('for an allowed host', () => {
    const allowed = () => limits({ allowHosts: [`127.0.0.1:${port}`] });

    it('reads a page', async () => {
      const f = createSafeFetcher(allowed());
      const page = await f.get(`http://127.0.0.1:${port}/articles/solar-costs.html`);
      expect(page).toMatchObject({ status: 200, contentType: 'text/html' });
      expect(page.body.toString()).toMatch(/0\.049 US dollars/);
      await f.close();
    });

    it.each([
      ['a redirect to loopback', '/to-loopback', 'BlockedError', /localhost resolves to 127\.0\.0\.1/],
      ['a redirect loop', '/loop', 'SkippedError', /more than 5 redirects/],
      ['an oversized body', '/big', 'SkippedError', /larger than 1000000 bytes/],
      ['a gzip bomb', '/bomb', 'SkippedError', /larger than 1000000 bytes \(after decompression\)/],
      ['a dripping body', '/drip', 'SkippedError', /not complete within 1500 ms/],
      ['a binary content type', '/binary', 'SkippedError', /content type "application\/octet-stream" is not read/],
    ])('stops %s', async (_name, path, name, reason) => {
      // Only the dripping body is stopped by the time limit; the others must be stopped by their
      // own check, however slow the machine, so they get a limit they cannot reach.
      const f = createSafeFetcher(limits({ allowHosts: [`127.0.0.1:${port}`], ...(path === '/drip' ? {} : { totalTimeoutMs: 60_000 }) }));
      const before = process.memoryUsage().rss;
      const err = await f.get(`http://127.0.0.1:${port}${path}`).catch((e: unknown) => e as Error);
      expect(err).toMatchObject({ name });
      expect((err as Error).message).toMatch(reason);
      // The cap holds in memory too: nothing near the 50 MB bomb was buffered.
      expect(process.memoryUsage().rss - before).toBeLessThan(40_000_000);
      await f.close();
    });
  });
});
