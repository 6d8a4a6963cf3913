// What a search provider is to the rest of the code: its name, the topics it answers, its own
// environment variables (declared here once: the configuration parses them, docs/configuration.md
// lists them), what it cannot work without, its rate, and how it is made. One file per provider
// (./tavily.ts …), one line in ./registry.ts.
import type { z } from 'zod';
import type { SearchProvider, Topic } from './types';

/** The values of a provider's variables, as its schema parsed them. */
export type ProviderSettings<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/** What every provider is made with besides its own settings. */
export interface ProviderContext {
  timeoutMs: number;
  /** The user agent pages are read as (CRAWL_USER_AGENT); Wikipedia asks for one that says who calls. */
  userAgent: string;
}

export interface ProviderDefinition<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The name SEARCH_PROVIDERS and SEARCH_RATE_LIMITS use. */
  name: string;
  /** The topics whose queries it answers (src/activities/search/router.ts), in the registry's order
   *  of preference. */
  topics: readonly Topic[];
  /** Its environment variables, each with its `.describe()`. */
  settings: S;
  /** The variable it cannot work without, and what to call it in the error. */
  needs?: { variable: keyof S & string; what: string };
  /** On when SEARCH_PROVIDERS is unset (keyless providers; SearXNG once its URL is set). */
  onByDefault(s: ProviderSettings<S>): boolean;
  /** The variable whose setting turns it on when SEARCH_PROVIDERS is unset, for the documentation. */
  turnedOnBy?: keyof S & string;
  /** A keyless stand-in for the web: on by default only while no other web provider is (a key or
   *  SEARXNG_URL turns that one on, and this one off). */
  standsIn?: boolean;
  /** Requests per second in one worker unless SEARCH_RATE_LIMITS says otherwise (`of({})`: with no
   *  setting of its own), and what the documentation adds when it depends on a setting. */
  rate: { of(s: Partial<ProviderSettings<S>>): number; note?: string };
  make(s: ProviderSettings<S>, context: ProviderContext): SearchProvider;
}

/** A provider as the registry holds it: its settings' values are opaque until it is made. */
export interface RegisteredProvider {
  name: string;
  topics: readonly Topic[];
  settings: z.ZodRawShape;
  needs?: { variable: string; what: string };
  onByDefault(values: Record<string, unknown>): boolean;
  turnedOnBy?: string;
  standsIn?: boolean;
  rate: { of(values: Record<string, unknown>): number; note?: string };
  make(values: Record<string, unknown>, context: ProviderContext): SearchProvider;
}

/** A provider whose callbacks are typed by its own settings. The registry erases that type: the
 *  values it is later given are those the configuration parsed with these same settings. */
export function defineProvider<S extends z.ZodRawShape>(d: ProviderDefinition<S>): RegisteredProvider {
  return d as unknown as RegisteredProvider;
}

/** Requests per second that depend on no setting. */
export const fixedRate = (perSecond: number) => ({ of: () => perSecond });

/** The values of one provider's own variables, out of all the parsed ones. */
export function valuesOf(p: RegisteredProvider, all: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(p.settings).map((k) => [k, all[k]]));
}
