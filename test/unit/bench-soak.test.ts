// The soak bench's arithmetic: reading prom-client's text, the first-against-last-quarter verdict
// and the trend per hour. A verdict that called growth flat would make the hour-long soak say nothing.
import { describe, expect, it } from 'vitest';
import { metricValue, slopePerHour, verdicts, type Interval } from '../../bench/support/soak-sampler';

const interval = (endS: number, rss: number, lagMs: number, runS: number): Interval => ({
  endS,
  rssMb: [rss, rss],
  heapMb: [100, 100],
  lagP99Ms: [lagMs],
  lagMaxMs: [lagMs * 2],
  healthzMs: [5, 6, 7],
  runS: [runS, runS],
  failed: 0,
  submitted: 2,
});

describe('soak figures', () => {
  it('reads an unlabelled series, and not a longer name that starts the same', () => {
    const text = [
      '# HELP deep_research_nodejs_eventloop_lag_p99_seconds The 99th percentile',
      'deep_research_nodejs_eventloop_lag_p99_seconds_extra 9',
      'deep_research_nodejs_eventloop_lag_p99_seconds 0.0125',
      'deep_research_nodejs_heap_size_used_bytes{kind="x"} 1048576',
    ].join('\n');
    expect(metricValue(text, 'deep_research_nodejs_eventloop_lag_p99_seconds')).toBe(0.0125);
    expect(metricValue(text, 'deep_research_nodejs_heap_size_used_bytes')).toBe(1048576);
    expect(metricValue(text, 'deep_research_missing')).toBeUndefined();
  });

  it('calls steady figures flat and growing ones GROWS', () => {
    const steady = Array.from({ length: 8 }, (_, i) => interval(60 * (i + 1), 500 + (i % 2) * 5, 20, 5));
    expect(verdicts(steady).every((v) => v.flat)).toBe(true);
    // RSS up by 40%, the loop delay tripled, run times doubled from the first quarter to the last.
    const growing = Array.from({ length: 8 }, (_, i) => interval(60 * (i + 1), 500 + i * 40, 20 + i * 10, 5 + i));
    const byName = Object.fromEntries(verdicts(growing).map((v) => [v.name, v.flat]));
    expect(byName).toMatchObject({ RSS: false, 'event-loop delay p99': false, 'run time p95': false, 'heap used': true });
  });

  it('gives the trend per hour', () => {
    // 10 MB more every minute is 600 MB an hour.
    expect(slopePerHour([0, 1, 2, 3].map((m) => [m * 60, 400 + 10 * m]))).toBeCloseTo(600);
    expect(slopePerHour([[0, 1]])).toBeNaN();
  });
});
