// The page's view of the HTTP API: the key kept in this browser and the typed client (src/client)
// that sends it. The page's screens call the client's named methods (no path is written here);
// the run's events come through `follow`, which resumes with Last-Event-ID by itself.
// The client takes only types from the server's modules: the bundle carries none of their code (nor zod).
import { ClientError, createClient, type RunEvent } from '../../src/client';

export type { RunEvent };
export { costText, plural, Draft, draftMarkdown, type DraftPart, type PlanEditInput } from '../../src/client';

const KEY_ITEM = 'deep-research.key';

export const keyStore = {
  get: (): string | null => localStorage.getItem(KEY_ITEM),
  set: (key: string) => localStorage.setItem(KEY_ITEM, key),
  clear: () => localStorage.removeItem(KEY_ITEM),
};

/** The API's errors on this page: status, code, message, details. */
export { ClientError as ApiError };

/** The API this page was served by, with the key of this browser (read at each request). */
export const client = createClient({ baseUrl: '', key: () => keyStore.get() });

/**
 * Follows the run's events from `after` on; calls `onEvent` for each, in order, once. Reconnects
 * after a dropped connection (with Last-Event-ID); stops after `done` or when `signal` aborts.
 */
export async function follow(
  id: string,
  after: number,
  onEvent: (e: RunEvent) => void,
  onState: (s: 'live' | 'reconnecting') => void,
  signal: AbortSignal,
): Promise<void> {
  // A page keeps trying for as long as it is open; only a missing key or run (4xx) ends it with an error.
  const events = client.events(id, { after, signal, onState, retryDelayMs: 1_500, maxFailures: Number.POSITIVE_INFINITY });
  for await (const e of events) onEvent(e);
}
