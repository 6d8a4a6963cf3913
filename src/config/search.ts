// Web and scholarly search: which providers answer, how many results, how fast. Each provider's
// own variables are declared with it (src/infra/search/<provider>.ts) and parsed here with these.
import { z } from 'zod';
import { SEARCH_PROVIDERS } from '../infra/search/registry';
import { valuesOf, type RegisteredProvider } from '../infra/search/provider';
import { area, int, invalidConfiguration, namedNumbers, optionalString, type ConfigIssue } from './setting-kit';

const names = SEARCH_PROVIDERS.map((p) => p.name);
const listed = (ps: readonly RegisteredProvider[]) => ps.map((p) => `\`${p.name}\``).join(', ');
const web = SEARCH_PROVIDERS.filter((p) => p.topics.includes('general'));
const onByDefault = SEARCH_PROVIDERS.filter((p) => p.onByDefault({}) && !p.standsIn);
const standIns = SEARCH_PROVIDERS.filter((p) => p.standsIn);

/** The providers on when SEARCH_PROVIDERS is unset: each whose settings turn it on, a stand-in
 *  for the web only while no other web provider is. */
export function defaultProviders(settings: Record<string, Record<string, unknown>>): string[] {
  const on = SEARCH_PROVIDERS.filter((p) => p.onByDefault(settings[p.name]!));
  const otherWeb = on.some((p) => !p.standsIn && web.includes(p));
  return on.filter((p) => !(p.standsIn && otherWeb)).map((p) => p.name);
}
const onBySetting = SEARCH_PROVIDERS.filter((p) => p.turnedOnBy).map((p) => `\`${p.name}\` when \`${p.turnedOnBy}\` is set`);
const rates = SEARCH_PROVIDERS.map((p) => `\`${p.name}=${p.rate.of({})}\`${p.rate.note ? ` (${p.rate.note})` : ''}`).join(', ');

/** Every provider's own variables, in the registry's order. */
export const providerSettings: z.ZodRawShape = Object.assign({}, ...SEARCH_PROVIDERS.map((p) => p.settings));

/** SEARCH_PROVIDERS names known providers, each with what it needs. */
function checkNamed(named: string[], settings: Record<string, Record<string, unknown>>): void {
  const issues: ConfigIssue[] = [];
  for (const name of named) {
    const p = SEARCH_PROVIDERS.find((x) => x.name === name);
    if (!p) issues.push({ variable: 'SEARCH_PROVIDERS', reason: `unknown provider "${name}" (known: ${names.join(', ')})` });
    else if (p.needs && !settings[name]![p.needs.variable])
      issues.push({ variable: p.needs.variable, reason: `SEARCH_PROVIDERS includes ${name}, which needs ${p.needs.what}` });
  }
  if (issues.length) throw invalidConfiguration(issues);
}

const searchSettings = {
  SEARCH_PROVIDERS: optionalString
    .transform((v) =>
      v === undefined
        ? undefined
        : v
            .split(',')
            .map((x) => x.trim().toLowerCase())
            .filter(Boolean),
    )
    .describe(
      `enabled providers: ${listed(web)} (the web), ${listed(SEARCH_PROVIDERS.filter((p) => !web.includes(p)))}; each query goes to those of its topic (see [Search providers](tools.md#search-providers)); unset: ${[listed(onByDefault), ...onBySetting].join(', and ')}, and ${listed(standIns)} while no other web provider is on`,
    ),
  SEARCH_MAX_RESULTS: int(1, 20).default(5).describe('results kept per query'),
  SEARCH_TIMEOUT_MS: int(500, 120_000).default(15_000).describe('one provider request'),
  SEARCH_RATE_LIMITS: namedNumbers(/^[a-z]+$/, z.number().positive(), 'provider=requestsPerSecond').describe(
    `\`provider=requests per second\` in one worker, over the built-in ${rates}`,
  ),
};

export const searchArea = area(
  'Search',
  searchSettings,
  /** `values`: every provider's variables, parsed with their own schemas (`providerSettings`). */
  (v, values: Record<string, unknown>) => {
    const settings = Object.fromEntries(SEARCH_PROVIDERS.map((p) => [p.name, valuesOf(p, values)]));
    const providers = v.SEARCH_PROVIDERS ?? defaultProviders(settings);
    checkNamed(v.SEARCH_PROVIDERS ?? [], settings);
    return {
      search: {
        /** Enabled providers; by default the keyless ones, SearXNG when SEARXNG_URL is set, each keyed one
         *  whose key is, and DuckDuckGo while none of those searches the web. */
        providers,
        maxResults: v.SEARCH_MAX_RESULTS,
        timeoutMs: v.SEARCH_TIMEOUT_MS,
        /** Each provider's own variables, by provider name, as its settings parsed them. */
        settings,
        /** Requests per second per provider in one worker (arXiv asks for one every 3 s). */
        rateLimits: {
          ...Object.fromEntries(SEARCH_PROVIDERS.map((p) => [p.name, p.rate.of(settings[p.name]!)])),
          ...v.SEARCH_RATE_LIMITS,
        },
      },
    };
  },
);

/** The banner's line about search: the providers on, and how to add (or better) the web when
 *  none or only a keyless stand-in searches it. */
export function describeSearch(providers: string[]): string {
  const on = providers.join(', ') || 'none';
  const webOn = web.filter((p) => providers.includes(p.name));
  if (webOn.some((p) => !p.standsIn)) return on;
  const ways = SEARCH_PROVIDERS.filter((p) => p.turnedOnBy && web.includes(p)).map((p) => p.turnedOnBy!);
  const set = `set ${ways.slice(0, -1).join(', ')} or ${ways.at(-1)}`;
  return webOn.length
    ? `${on}; the web from ${webOn.map((p) => p.name).join(', ')}'s results page, keyless and rate-limited: ${set} for a search API`
    : `${on}; no general web search: ${set}`;
}
