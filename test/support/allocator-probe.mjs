// Settles the allocator the way bin/deep-research.mjs does for `worker` (src/infra/allocator.ts),
// with the setting in ALLOCATOR_PROBE_SETTING, then prints what this process ended up with: its id,
// whether jemalloc is mapped into it, what it says it runs on, and what its children would inherit.
import { readFileSync } from 'node:fs';
import { register } from 'tsx/esm/api';

register();
const { allocatorSetting } = await import('../../src/config.ts');
const { allocatorInUse, PRELOADED_MARK, settleAllocator } = await import('../../src/infra/allocator.ts');
settleAllocator(allocatorSetting({ ALLOCATOR: process.env.ALLOCATOR_PROBE_SETTING }), ['worker']);
process.stdout.write(
  JSON.stringify({
    pid: process.pid,
    jemallocMapped: readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'),
    inUse: allocatorInUse(),
    preload: process.env.LD_PRELOAD ?? null,
    mark: process.env[PRELOADED_MARK] ?? null,
  }),
);
