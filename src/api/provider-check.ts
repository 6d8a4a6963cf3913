// The one check of search provider names a client gives (a run's options.searchProviders, a
// tenant's preferences): they must be among the configured ones, and a 400 names those.
import { ApiError } from '../shared/errors';

/** 400 naming the configured providers when `names` holds others. */
export function checkProviders(names: readonly string[] | null | undefined, configured: readonly string[], field: string): void {
  const unknown = (names ?? []).filter((n) => !configured.includes(n));
  if (!unknown.length) return;
  throw new ApiError(
    400,
    'unknown_search_provider',
    `${field} names providers this server does not have (${unknown.join(', ')}); configured: ${configured.join(', ') || 'none'}`,
    { unknown, configured },
  );
}
