// Per-provider request rates inside one worker process (the search task queue's own rate limit
// holds across all workers). A token bucket: `perSecond` tokens, a burst of at most one second's.
import type { SearchProvider } from '../../infra/search/types';

export function rateLimited(provider: SearchProvider, perSecond: number, now: () => number = Date.now): SearchProvider {
  const capacity = Math.max(1, perSecond);
  let tokens = capacity;
  let last = now();
  let chain: Promise<void> = Promise.resolve();

  const take = async (signal?: AbortSignal) => {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const t = now();
      tokens = Math.min(capacity, tokens + ((t - last) / 1000) * perSecond);
      last = t;
      if (tokens >= 1) {
        tokens -= 1;
        return;
      }
      const waitMs = Math.ceil(((1 - tokens) / perSecond) * 1000);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, waitMs);
        signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
      });
    }
  };

  return {
    name: provider.name,
    async search(query, opts) {
      // Callers queue in order, so a burst is spread out instead of racing for tokens.
      const turn = chain.then(() => take(opts.signal));
      chain = turn.catch(() => undefined);
      await turn;
      return provider.search(query, opts);
    },
  };
}
