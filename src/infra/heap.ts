// How V8 sizes the heaps of a long-running process (dev, worker, api). Left to itself, V8 lets the
// old generation grow to up to four times what survived the last full collection when the process
// allocates fast, which a worker with a hundred runs in flight always does: the main heap held about
// 90 MB of live objects and 185 MB of old space at its peak in `bench:load`. And every thread's
// young generation may reach 2 × 16 MB, which the workflow thread (short activations, few survivors)
// never needs. Both are V8 flags; set here, before the worker starts its threads, they bound the
// slack instead of the live heap, so nothing fails that would have run with V8's defaults.
import { setFlagsFromString } from 'node:v8';

export interface HeapSettings {
  /** Old generation limit after a full collection: live size × (1 + percent / 100); 0: V8's adaptive factor. */
  growthPercent: number;
  /** Largest semi-space, in MB, of the threads started from now on (the workflow thread, page extraction); 0: V8's default. */
  threadSemiSpaceMb: number;
}

/** The V8 flags for `s`, as set by {@link tuneHeap}. */
export function heapFlags(s: HeapSettings): string[] {
  return [
    ...(s.growthPercent > 0 ? [`--heap-growing-percent=${s.growthPercent}`] : []),
    ...(s.threadSemiSpaceMb > 0 ? [`--max-semi-space-size=${s.threadSemiSpaceMb}`] : []),
  ];
}

/**
 * The slab small Buffers are cut from (`Buffer.allocUnsafe`). Node 24 makes it 64 KiB, and a small
 * Buffer kept for long keeps its whole slab: the SDK keeps each cached workflow's last activation
 * completion (a few hundred bytes), which at a thousand runs in flight pinned 913 slabs, 57 MB
 * (a heap snapshot of `bench:load` at 1,000 runs). Node 20's 8 KiB pins an eighth of that.
 */
export const BUFFER_POOL_BYTES = 8 * 1024;

/** Applies `s` to this process. The growth factor is read at every full collection, so it holds
 *  for the main thread too; the semi-space size is read when an isolate is made, so it holds for
 *  the threads started after this call. Small Buffers come from slabs of BUFFER_POOL_BYTES from
 *  the next slab on. */
export function tuneHeap(s: HeapSettings): void {
  for (const flag of heapFlags(s)) setFlagsFromString(flag);
  Buffer.poolSize = BUFFER_POOL_BYTES;
}
