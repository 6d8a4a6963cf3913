// Reading pages: the SSRF guard's exceptions, limits, robots.txt, the user agent; and the MCP
// servers whose tools roles may use.
import { z } from 'zod';
import { area, hostList, int, optionalString, trueOrFalse } from './setting-kit';

const crawlSettings = {
  CRAWL_ALLOW_HOSTS: hostList.describe('`host` or `host:port` entries the SSRF guard lets through (development and tests only)'),
  CRAWL_MAX_BYTES: int(10_000, 100_000_000).default(5_000_000).describe('largest page read, in bytes counted after decompression'),
  CRAWL_TIMEOUT_MS: int(500, 300_000).default(20_000).describe('time limit of one page read'),
  CRAWL_CONNECT_TIMEOUT_MS: int(100, 60_000).default(5_000).describe('time limit of the connection of one page read'),
  CRAWL_RESPECT_ROBOTS: trueOrFalse(true).describe('whether robots.txt is respected'),
  CRAWL_USER_AGENT: z
    .string()
    .min(1)
    .default('deep-research-bot/0.1 (+https://github.com/deep-research)')
    .describe('the user agent pages are read as, and robots.txt is read for'),
  CRAWL_PAGE_PARTS: int(1, 16)
    .default(4)
    .describe(
      "parts a page longer than one extraction's budget (derived from the model's context window) is read in, each for the goal; a longer page is first reduced to the passages that bear most on the goal. `1`: reduce every long page to one extraction",
    ),
  MCP_CONFIG: optionalString.describe('JSON file of MCP servers (see [MCP tools](tools.md#mcp-tools))'),
};

export const crawlArea = area('Crawling and MCP tools', crawlSettings, (v) => ({
  crawl: {
    allowHosts: v.CRAWL_ALLOW_HOSTS,
    maxBytes: v.CRAWL_MAX_BYTES,
    timeoutMs: v.CRAWL_TIMEOUT_MS,
    connectTimeoutMs: v.CRAWL_CONNECT_TIMEOUT_MS,
    respectRobots: v.CRAWL_RESPECT_ROBOTS,
    userAgent: v.CRAWL_USER_AGENT,
    /** Parts a long page is read in (CRAWL_PAGE_PARTS). */
    pageParts: v.CRAWL_PAGE_PARTS,
  },
  /** JSON file listing MCP servers (stdio or streamable HTTP) and the roles that may use them. */
  mcp: { configPath: v.MCP_CONFIG },
}));
