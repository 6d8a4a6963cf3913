// A tenant's search preferences: the providers its runs use, and domains ranked higher or avoided.
// One row per tenant, replaced whole by PUT /v1/search-preferences.
import type pg from 'pg';

export interface SearchPreferences {
  /** Absent: every configured provider. */
  providers?: string[];
  preferDomains: string[];
  avoidDomains: string[];
  /** ISO time of the last change; absent while the tenant has stored none. */
  updatedAt?: string;
}

export function searchPreferencesTable(pool: pg.Pool) {
  return {
    async get(tenant: string): Promise<SearchPreferences> {
      const { rows } = await pool.query<{
        providers: string[] | null;
        prefer_domains: string[];
        avoid_domains: string[];
        updated_at: Date;
      }>('SELECT providers, prefer_domains, avoid_domains, updated_at FROM search_preferences WHERE tenant = $1', [tenant]);
      const r = rows[0];
      if (!r) return { preferDomains: [], avoidDomains: [] };
      return {
        ...(r.providers ? { providers: r.providers } : {}),
        preferDomains: r.prefer_domains,
        avoidDomains: r.avoid_domains,
        updatedAt: r.updated_at.toISOString(),
      };
    },
    async put(tenant: string, p: Omit<SearchPreferences, 'updatedAt'>): Promise<SearchPreferences> {
      const { rows } = await pool.query<{ updated_at: Date }>(
        `INSERT INTO search_preferences (tenant, providers, prefer_domains, avoid_domains) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant) DO UPDATE SET providers = EXCLUDED.providers, prefer_domains = EXCLUDED.prefer_domains,
           avoid_domains = EXCLUDED.avoid_domains, updated_at = now()
         RETURNING updated_at`,
        [tenant, p.providers ?? null, p.preferDomains, p.avoidDomains],
      );
      return { ...p, updatedAt: rows[0]!.updated_at.toISOString() };
    },
  };
}
export type SearchPreferencesTable = ReturnType<typeof searchPreferencesTable>;
