// The enabled search providers, made from the configuration (each provider's definition is in
// src/infra/search/<provider>.ts and its line in src/infra/search/registry.ts), each held to its
// rate in this worker.
import type { Config } from '../../config';
import { SEARCH_PROVIDERS } from '../../infra/search/registry';
import type { ProviderContext } from '../../infra/search/provider';
import type { SearchProvider } from '../../infra/search/types';
import { rateLimited } from './rate-limit';

export type ProviderConfig = Pick<Config['search'], 'providers' | 'settings' | 'rateLimits' | 'timeoutMs'> &
  Pick<ProviderContext, 'userAgent'>;

/** Every provider SEARCH_PROVIDERS may name. */
export const KNOWN_PROVIDERS = SEARCH_PROVIDERS.map((p) => p.name);

/** Builds the enabled providers; a provider named but missing its key or URL is an error (the
 *  configuration refuses it first). */
export function buildProviders(c: ProviderConfig): Map<string, SearchProvider> {
  const out = new Map<string, SearchProvider>();
  for (const name of c.providers) {
    const definition = SEARCH_PROVIDERS.find((p) => p.name === name);
    if (!definition) throw new Error(`unknown search provider "${name}" (known: ${KNOWN_PROVIDERS.join(', ')})`);
    const settings = c.settings[name] ?? {};
    if (definition.needs && !settings[definition.needs.variable])
      throw new Error(`search provider ${name} needs ${definition.needs.variable}`);
    const provider = definition.make(settings, { timeoutMs: c.timeoutMs, userAgent: c.userAgent });
    const rate = c.rateLimits[name];
    out.set(name, rate ? rateLimited(provider, rate) : provider);
  }
  return out;
}
