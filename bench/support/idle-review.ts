// `bench:load --review idle`: what runs waiting for a plan review cost while nobody answers. The
// runs are submitted without autoAcceptPlan; once every run's status says it awaits review (and a
// short settling time), the dev process's, the Temporal server's (and with --pg PostgreSQL's) CPU
// and RSS are read over N idle minutes, in which the bench sends nothing. Then the runs are cancelled.
import { BenchApi, mapPool } from './api-client';
import { PeakRss, rssMb, StackCpu } from './procs';

export interface IdleFigures {
  idleMinutes: number;
  waitingRuns: number;
  secondsToAllWaiting: number;
  idleDevCpuPerMin: number;
  idleTemporalCpuPerMin: number;
  idlePostgresCpuPerMin?: number;
  idleStackCpuPerMin: number;
  devRssStartMb: number;
  devRssEndMb: number;
  temporalRssStartMb: number;
  temporalRssEndMb: number;
  peakDevRssMb: number;
}

export interface IdleSetup {
  api: BenchApi;
  runs: number;
  concurrency: number;
  minutes: number;
  pollMs: number;
  pids: { dev: number; temporal: number };
  withPostgres: boolean;
  question: (i: number) => string;
  key: (i: number) => string;
}

const SETTLE_MS = 10_000;

export async function idleReview(s: IdleSetup): Promise<IdleFigures> {
  const peak = new PeakRss({ dev: s.pids.dev });
  const t0 = performance.now();
  const ids = await mapPool(
    Array.from({ length: s.runs }, (_, i) => i),
    s.concurrency,
    (i) => s.api.submit(s.question(i), {}, s.key(i)),
  );
  await s.api.waitAll(ids, 'awaiting_review', s.pollMs);
  const secondsToAllWaiting = (performance.now() - t0) / 1000;
  console.log(`review idle:      ${ids.length} runs await review ${secondsToAllWaiting.toFixed(1)} s after the first submit`);
  // The last run's status changes a moment before its workflow task and activity complete.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const rss0 = { dev: rssMb(s.pids.dev), temporal: rssMb(s.pids.temporal) };
  const cpu = new StackCpu([s.pids.dev], s.pids.temporal, s.withPostgres);
  await new Promise((r) => setTimeout(r, s.minutes * 60_000));
  const used = cpu.used();
  const rss1 = { dev: rssMb(s.pids.dev), temporal: rssMb(s.pids.temporal) };
  const peakDev = peak.stop().dev!;
  const c0 = performance.now();
  await mapPool(ids, Math.min(s.concurrency, 64), (id) => s.api.cancel(id));
  await s.api.waitAll(ids, 'cancelled', s.pollMs);
  const perMin = (x: number) => x / s.minutes;
  const f: IdleFigures = {
    idleMinutes: s.minutes,
    waitingRuns: ids.length,
    secondsToAllWaiting,
    idleDevCpuPerMin: perMin(used.service),
    idleTemporalCpuPerMin: perMin(used.temporal),
    ...(s.withPostgres ? { idlePostgresCpuPerMin: perMin(used.pg) } : {}),
    idleStackCpuPerMin: perMin(used.stack),
    devRssStartMb: rss0.dev,
    devRssEndMb: rss1.dev,
    temporalRssStartMb: rss0.temporal,
    temporalRssEndMb: rss1.temporal,
    peakDevRssMb: peakDev,
  };
  console.log(
    `idle CPU-s/min:   dev ${f.idleDevCpuPerMin.toFixed(3)}, Temporal server ${f.idleTemporalCpuPerMin.toFixed(3)}${s.withPostgres ? `, PostgreSQL ${perMin(used.pg).toFixed(3)}` : ''}, stack ${f.idleStackCpuPerMin.toFixed(3)} (over ${s.minutes} idle min, the bench sending nothing)`,
  );
  console.log(
    `idle RSS:         dev ${rss0.dev.toFixed(0)} → ${rss1.dev.toFixed(0)} MB, Temporal server ${rss0.temporal.toFixed(0)} → ${rss1.temporal.toFixed(0)} MB (start → end of the idle minutes); dev peak ${peakDev.toFixed(0)} MB`,
  );
  console.log(`cancelled:        ${ids.length} runs in ${((performance.now() - c0) / 1000).toFixed(1)} s`);
  return f;
}
