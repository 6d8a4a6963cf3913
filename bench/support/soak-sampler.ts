// What the soak bench samples while the load runs, and how it tells flat from growing: the dev
// process's RSS (from /proc), its heap and event-loop delay (from its own /metrics: prom-client's
// defaults, whose delay histogram restarts at every scrape, so each scrape covers the time since
// the one before), the time /healthz takes to answer, and the run times of the runs that ended.
import { rssMb } from './procs';

export interface Interval {
  /** Seconds since the load began, at the interval's end. */
  endS: number;
  rssMb: number[];
  heapMb: number[];
  /** Event-loop delay p99 and max over each scrape, in ms. */
  lagP99Ms: number[];
  lagMaxMs: number[];
  healthzMs: number[];
  /** Submit to terminal status, seconds, of the runs that ended in this interval. */
  runS: number[];
  failed: number;
  submitted: number;
}

const MB = 1024 * 1024;

/** The value of one unlabelled series of a Prometheus text exposition. */
export function metricValue(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+|NaN)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

export function quantile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export const median = (xs: number[]) => quantile(xs, 0.5);

export class SoakSampler {
  readonly intervals: Interval[] = [];
  private current: Interval;
  private readonly t0 = performance.now();
  private readonly timers: NodeJS.Timeout[] = [];
  /** /metrics refused (e.g. a key of its own): the bench says so instead of printing no lag. */
  metricsProblem: string | undefined;

  constructor(
    private readonly apiUrl: string,
    private readonly devPid: number,
    private readonly intervalS: number,
  ) {
    this.current = this.fresh();
    this.timers.push(
      setInterval(() => void this.probeHealth(), 1_000),
      setInterval(() => void this.scrape(), 5_000),
      setInterval(() => this.roll(), intervalS * 1000),
    );
  }

  private fresh(): Interval {
    return { endS: 0, rssMb: [], heapMb: [], lagP99Ms: [], lagMaxMs: [], healthzMs: [], runS: [], failed: 0, submitted: 0 };
  }

  private roll(): void {
    this.current.endS = (performance.now() - this.t0) / 1000;
    this.intervals.push(this.current);
    this.current = this.fresh();
  }

  private async probeHealth(): Promise<void> {
    const s0 = performance.now();
    try {
      await fetch(`${this.apiUrl}/healthz`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.arrayBuffer());
    } catch {
      // a timed-out probe still counts, at the time it waited
    }
    this.current.healthzMs.push(performance.now() - s0);
  }

  private async scrape(): Promise<void> {
    this.current.rssMb.push(rssMb(this.devPid));
    try {
      const res = await fetch(`${this.apiUrl}/metrics`, { signal: AbortSignal.timeout(30_000) });
      if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
      const text = await res.text();
      const read = (name: string) => metricValue(text, `deep_research_${name}`);
      const heap = read('nodejs_heap_size_used_bytes');
      const p99 = read('nodejs_eventloop_lag_p99_seconds');
      const max = read('nodejs_eventloop_lag_max_seconds');
      if (heap !== undefined) this.current.heapMb.push(heap / MB);
      if (p99 !== undefined) this.current.lagP99Ms.push(p99 * 1000);
      if (max !== undefined) this.current.lagMaxMs.push(max * 1000);
    } catch (err) {
      this.metricsProblem = (err as Error).message;
    }
  }

  submitted(): void {
    this.current.submitted++;
  }

  ended(runS: number, status: string): void {
    this.current.runS.push(runS);
    if (status !== 'completed') this.current.failed++;
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    if (this.current.healthzMs.length) this.roll();
  }
}

export interface Verdict {
  name: string;
  first: number;
  last: number;
  unit: string;
  flat: boolean;
  rule: string;
}

/**
 * First quarter against last quarter of the measured intervals (after the warm-up), each a
 * median of the intervals' figures: RSS and heap may grow by 5% (and at least 16 MB: the
 * allocator's ordinary drift; a leak of 50 MB an hour moves an 800 MB process by about that much
 * between the first and the last quarter of an hour), the event-loop delay p99 and the run time p95 by 25% (and at least
 * 5 ms / 0.5 s: a busy shared machine's noise). More than that is growth, not noise.
 */
export function verdicts(measured: Interval[]): Verdict[] {
  const q = Math.max(1, Math.floor(measured.length / 4));
  const first = measured.slice(0, q);
  const last = measured.slice(-q);
  const per = (xs: Interval[], f: (i: Interval) => number) => median(xs.map(f).filter((x) => Number.isFinite(x)));
  const check = (name: string, unit: string, f: (i: Interval) => number, ratio: number, floor: number): Verdict => {
    const [a, b] = [per(first, f), per(last, f)];
    return { name, first: a, last: b, unit, flat: !(b > a * ratio && b - a > floor), rule: `≤ ×${ratio} or +${floor} ${unit}` };
  };
  return [
    check('RSS', 'MB', (i) => median(i.rssMb), 1.05, 16),
    check('heap used', 'MB', (i) => median(i.heapMb), 1.05, 16),
    check('event-loop delay p99', 'ms', (i) => Math.max(...i.lagP99Ms), 1.25, 5),
    check('/healthz p95', 'ms', (i) => quantile(i.healthzMs, 0.95), 1.25, 5),
    check('run time p95', 's', (i) => quantile(i.runS, 0.95), 1.25, 0.5),
  ];
}

/** Least-squares slope of a series against time, per hour. */
export function slopePerHour(points: [number, number][]): number {
  const pts = points.filter(([, y]) => Number.isFinite(y));
  if (pts.length < 2) return NaN;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  const num = pts.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = pts.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den ? (num / den) * 3600 : NaN;
}
