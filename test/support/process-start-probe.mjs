// Settles the process the way bin/deep-research.mjs does for `worker` (src/infra/process-start.ts),
// with ALLOCATOR and MAIN_SEMI_SPACE_MB from PROBE_ALLOCATOR and PROBE_SEMI_SPACE_MB, then prints
// what this process ended up with: its id, whether jemalloc is mapped into it, its main thread's
// young generation limit, what it says it runs on, and what its children would inherit.
import { readFileSync } from 'node:fs';
import { getHeapStatistics, getHeapSpaceStatistics } from 'node:v8';
import { register } from 'tsx/esm/api';

register();
const { startSettings } = await import('../../src/config.ts');
const { settledStart, PRELOADED_MARK, settleProcess } = await import('../../src/infra/process-start.ts');
settleProcess(startSettings({ ALLOCATOR: process.env.PROBE_ALLOCATOR, MAIN_SEMI_SPACE_MB: process.env.PROBE_SEMI_SPACE_MB }), ['worker']);
// Fill the young generation so that V8 grows it to its limit.
let keep = [];
for (let i = 0; i < 2e6; i++) {
  keep.push({ i, s: `x${i}` });
  if (keep.length > 2e5) keep = [];
}
process.stdout.write(
  JSON.stringify({
    pid: process.pid,
    jemallocMapped: readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'),
    newSpaceMb: getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20,
    heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
    settled: settledStart(),
    preload: process.env.LD_PRELOAD ?? null,
    mark: process.env[PRELOADED_MARK] ?? null,
  }),
);
