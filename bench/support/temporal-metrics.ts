// The Temporal dev server's own Prometheus counters (TEMPORAL_METRICS_PORT): requests by service and
// operation, and persistence calls by operation with the time they took, read before and after the
// load. They say what the server does per run (which RPCs, how many writes), where its CPU goes.

/** Counter values by `<metric> <service>/<operation>`. */
export type Counters = Map<string, number>;

const COUNTED = ['service_requests', 'persistence_requests', 'persistence_latency_sum'];

/** Parses the Prometheus text format's counters this bench reads, summed over other labels. */
export function parseCounters(text: string): Counters {
  const out: Counters = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^}]*)\}\s+([0-9.eE+-]+)$/.exec(line.trim());
    if (!m || !COUNTED.includes(m[1]!)) continue;
    const labels = new Map([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    const key = `${m[1]} ${labels.get('service_name') ?? '-'}/${labels.get('operation') ?? '-'}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

export async function readCounters(port: number): Promise<Counters> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`Temporal metrics on port ${port}: ${res.status}`);
  return parseCounters(await res.text());
}

/** What grew between two readings, per run, largest first: lines for the report. */
export function perRunLines(before: Counters, after: Counters, runs: number, top = 12): string[] {
  const grown = (metric: string) =>
    [...after]
      .filter(([k]) => k.startsWith(`${metric} `))
      .map(([k, v]) => [k.slice(metric.length + 1), (v - (before.get(k) ?? 0)) / runs] as const)
      .filter(([, v]) => v > 0.05)
      .sort((a, b) => b[1] - a[1]);
  const requests = grown('service_requests');
  const persistence = grown('persistence_requests');
  const seconds = new Map(grown('persistence_latency_sum'));
  const total = (xs: readonly (readonly [string, number])[]) => xs.reduce((a, [, v]) => a + v, 0);
  return [
    `server requests/run: ${total(requests).toFixed(0)} in all; ${requests
      .slice(0, top)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(', ')}`,
    `persistence/run:  ${total(persistence).toFixed(0)} calls, ${(1000 * total([...seconds])).toFixed(0)} ms; ${persistence
      .slice(0, top)
      .map(([k, v]) => `${k.replace(/^-\//, '')} ${v.toFixed(1)} (${(1000 * (seconds.get(k) ?? 0)).toFixed(1)} ms)`)
      .join(', ')}`,
  ];
}
