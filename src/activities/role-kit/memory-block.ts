// What the roles that read the user's memory send of it (coordinator, planner, reporter, the
// memory role itself): the user's facts as the prompts' `userMemory` block.
import { memoryLines, type MemoryOwner } from '../../shared/memory';
import type { Store } from '../store';

/** The `userMemory` variable of the prompts that read memory: the user's facts, one a line; empty
 *  (the block left out) without an owner or without facts. Read at call time, so a deletion counts
 *  from the next call on. */
export async function readUserMemory(store: Pick<Store, 'memory'>, owner: MemoryOwner | undefined): Promise<string> {
  if (!owner) return '';
  return memoryLines(await store.memory.list(owner));
}
