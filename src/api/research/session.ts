// The session a run was started in, read from the run's memo (start.ts writes it there): the chat
// endpoint finds a conversation's session from the run id its previous answer carried.
import { ApiError } from '../../shared/errors';
import { tenantRun, type ResearchContext } from './context';

/** The run's session, if the run is the tenant's and was started in one; undefined otherwise. */
export async function sessionOfRun(ctx: ResearchContext, id: string, tenant: string): Promise<string | undefined> {
  try {
    const { desc } = await tenantRun(ctx, id, tenant);
    const sessionId = desc.memo?.sessionId;
    return typeof sessionId === 'string' ? sessionId : undefined;
  } catch (err) {
    // Another tenant's run is as unknown as a missing one: no session to continue.
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}
