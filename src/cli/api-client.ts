// The CLI's view of the HTTP API: the typed client (src/client) with the key and address of the
// command line, and a hint on how to start an API when none answers.
import { ClientError, createClient, type Client, type RunEvent } from '../client';

export interface ApiClientOptions {
  api: string;
  key?: string | undefined;
  /** Sent as X-Tenant-Id: the API checks it against the key's tenant, and an open API acts for it. */
  tenant?: string | undefined;
}

/** The client's error under the name the commands use. */
export { ClientError as ApiFailure };
export type { RunEvent };

export function apiClient(o: ApiClientOptions): Client {
  return createClient({
    baseUrl: o.api,
    key: o.key,
    tenant: o.tenant,
    unreachableHint: '; start it with `deep-research dev` or set --api / DEEP_RESEARCH_API',
  });
}
export type ApiClient = Client;
