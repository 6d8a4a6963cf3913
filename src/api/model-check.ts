// The models a request may name (a run's options.models, a rewrite's model): the roles' own and the
// fallback's, LLM_REQUEST_MODELS, and those the LLM provider's models list serves (asked at most
// every ten minutes; a provider that does not answer leaves the configured ones). A model outside
// them is a 400 that lists them, before anything starts.
import { ApiError } from '../shared/errors';
import type { Config } from '../config';

/** How long the provider's models list is believed. */
const LISTED_TTL_MS = 10 * 60_000;
/** The most model names an error lists (a hosted provider serves hundreds). */
const MAX_LISTED = 100;

export interface ModelCatalog {
  /** Every model a request may name, sorted. */
  allowed(): Promise<string[]>;
}

type CatalogConfig = Pick<Config['llm'], 'models' | 'requestModels'> & { fallback?: { models: Record<string, string> } | undefined };

export function modelCatalog(llm: CatalogConfig, listed?: () => Promise<string[] | undefined>): ModelCatalog {
  const configured = [...Object.values(llm.models), ...Object.values(llm.fallback?.models ?? {}), ...llm.requestModels];
  let cache: { ids: string[]; until: number } | undefined;
  return {
    async allowed() {
      if (listed && !(cache && cache.until > Date.now())) cache = { ids: (await listed()) ?? [], until: Date.now() + LISTED_TTL_MS };
      return [...new Set([...configured, ...(cache?.ids ?? [])])].sort();
    },
  };
}

/** 400 naming the allowed models when `names` holds another. */
export async function checkModels(catalog: ModelCatalog | undefined, names: readonly string[], field: string): Promise<void> {
  if (!catalog || !names.length) return;
  const allowed = await catalog.allowed();
  const unknown = [...new Set(names)].filter((n) => !allowed.includes(n));
  if (!unknown.length) return;
  const shown =
    allowed.length > MAX_LISTED ? `${allowed.slice(0, MAX_LISTED).join(', ')} and ${allowed.length - MAX_LISTED} more` : allowed.join(', ');
  throw new ApiError(400, 'unknown_model', `${field} names models this server does not allow (${unknown.join(', ')}); allowed: ${shown}`, {
    unknown,
    allowed,
  });
}
