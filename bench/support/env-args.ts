// The benches' repeated `--env K=V` option, as a record of settings.

/** `K=V` strings as { K: V } (the value is everything after the first `=`). */
export function envPairs(list: readonly string[] | undefined): Record<string, string> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}
