// Prints the young generation a worker thread reaches while it makes objects that live a little, for a thread
// started before tuneHeap and one started after it (test/unit/heap.test.ts runs this in a process
// of its own, since V8 flags hold for the whole process).
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../../src/config';
import { tuneHeap } from '../../src/infra/heap';

const THREAD = `
const { getHeapSpaceStatistics } = require('node:v8');
const { parentPort } = require('node:worker_threads');
// A window of recent objects survives a few scavenges, which is what makes V8 grow the new space.
const window = new Array(300000);
for (let i = 0; i < 4e6; i++) window[i % window.length] = { i };
parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
`;

function youngGeneration(): Promise<number> {
  return new Promise((resolve, reject) => {
    const w = new Worker(THREAD, { eval: true });
    w.once('message', (n: number) => void w.terminate().then(() => resolve(n)));
    w.once('error', reject);
  });
}

/** The slab the next small Buffer is cut from, once the current one is used up: enough is cut to use
 *  up the largest slab there may be (Node 24's 64 KiB) wherever in it the last cut was. */
function nextSlab(): number {
  let last = Buffer.allocUnsafe(16);
  for (let made = 0; made < 4 * 64 * 1024; made += 16) last = Buffer.allocUnsafe(16);
  return last.buffer.byteLength;
}

const before = await youngGeneration();
const slabBefore = nextSlab();
tuneHeap(loadConfig({}).heap);
// The smallest of three threads: one thread's new space can briefly commit more than its two
// semi-spaces (CI once read 12.25 MB where every run here reads 8), which says nothing of the limit.
const after = Math.min(await youngGeneration(), await youngGeneration(), await youngGeneration());
const main = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
process.stdout.write(JSON.stringify({ before, after, main, slabBefore, slabAfter: nextSlab() }) + '\n');
