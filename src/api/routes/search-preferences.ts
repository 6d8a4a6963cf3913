// A tenant's search preferences under /v1: which providers its runs use, and domains ranked higher
// or avoided. The tenant is the key's; a run's own options.searchProviders wins over them.
import { Router, type Response } from 'express';
import type { SearchPreferencesTable } from '../../activities/store';
import { SearchPreferencesBody, SearchPreferencesView } from '../contract';
import { checkProviders } from '../provider-check';
import { reply, route, type RouteTable } from '../route-spec';

export const SEARCH_PREFERENCE_ROUTES = {
  get: {
    method: 'get',
    path: '/search-preferences',
    summary: "The tenant's search preferences: providers, preferred and avoided domains (and the providers this server has)",
    responses: { 200: { description: 'the preferences', content: SearchPreferencesView } },
    errors: [401, 429],
  },
  put: {
    method: 'put',
    path: '/search-preferences',
    summary:
      "Replace the tenant's search preferences. Providers must be configured ones (400 names them); avoided domains are dropped " +
      'from results unless nothing else is found, preferred ones rank higher; no body: back to none',
    body: { content: SearchPreferencesBody, required: false },
    responses: { 200: { description: 'stored', content: SearchPreferencesView } },
    errors: [400, 401, 429],
  },
} satisfies RouteTable;

export interface SearchPreferenceRouteDeps {
  preferences: SearchPreferencesTable;
  /** SEARCH_PROVIDERS: the names a tenant may choose from. */
  configuredProviders: string[];
}

const tenantOf = (res: Response) => String(res.locals.tenant);

export function searchPreferenceRoutes(deps: SearchPreferenceRouteDeps): Router {
  const r = Router();
  const S = SEARCH_PREFERENCE_ROUTES;
  const view = (tenant: string, p: Awaited<ReturnType<SearchPreferencesTable['get']>>): SearchPreferencesView => ({
    tenant,
    ...(p.providers ? { providers: p.providers } : {}),
    preferDomains: p.preferDomains,
    avoidDomains: p.avoidDomains,
    ...(p.updatedAt ? { updatedAt: p.updatedAt } : {}),
    configuredProviders: deps.configuredProviders,
  });

  route(r, S.get, async (_req, res) => {
    const tenant = tenantOf(res);
    reply(res, S.get, 200, view(tenant, await deps.preferences.get(tenant)));
  });

  route(r, S.put, async (req, res) => {
    const body = SearchPreferencesBody.parse(req.body ?? {});
    checkProviders(body.providers, deps.configuredProviders, 'providers');
    const tenant = tenantOf(res);
    const stored = await deps.preferences.put(tenant, {
      ...(body.providers ? { providers: [...new Set(body.providers)] } : {}),
      preferDomains: [...new Set(body.preferDomains)],
      avoidDomains: [...new Set(body.avoidDomains)],
    });
    reply(res, S.put, 200, view(tenant, stored));
  });

  return r;
}
