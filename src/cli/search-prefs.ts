// `deep-research search-prefs`: the tenant's search preferences through the HTTP API.
import { defineCommand, UsageError } from './command-table';
import type { SearchPreferencesView } from '../api/contract';

function describe(p: SearchPreferencesView): string {
  const list = (xs: string[] | undefined, none: string) => (xs?.length ? xs.join(', ') : none);
  return [
    `tenant ${p.tenant}${p.updatedAt ? ` (changed ${p.updatedAt})` : ' (nothing stored)'}`,
    `  providers: ${list(p.providers, `all configured (${p.configuredProviders.join(', ')})`)}`,
    `  preferred domains: ${list(p.preferDomains, 'none')}`,
    `  avoided domains: ${list(p.avoidDomains, 'none')}`,
    '',
  ].join('\n');
}

export const searchPrefsCommand = defineCommand({
  name: 'search-prefs',
  usage: `  search-prefs [show]                         the tenant's search providers, preferred and avoided domains
  search-prefs set [--provider NAME]... [--prefer DOMAIN]... [--avoid DOMAIN]...
                                              replace them (no --provider: all configured)`,
  parse: ({ positionals, flags }) => {
    const [sub = 'show', ...rest] = positionals;
    if ((sub !== 'show' && sub !== 'set') || rest.length)
      throw new UsageError(`search-prefs takes show or set, not ${positionals.join(' ')}`);
    return {
      sub,
      body: {
        ...(flags.provider?.length ? { providers: flags.provider } : {}),
        preferDomains: flags.prefer ?? [],
        avoidDomains: flags.avoid ?? [],
      },
    };
  },
  handle: async ({ client, io, json, printJson }, { sub, body }) => {
    const p = sub === 'set' ? await client.searchPreferences.put(body) : await client.searchPreferences.get();
    if (json) printJson(p);
    else io.out(describe(p));
    return 0;
  },
});
