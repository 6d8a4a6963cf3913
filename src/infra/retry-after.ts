// How long an HTTP server asked us to wait: `retry-after-ms` (OpenAI's), or `Retry-After` in
// seconds or as an HTTP date. Used for a model provider's 429 and a webhook receiver's 429/503.
export function retryAfterMs(headers: { get(name: string): string | null } | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
