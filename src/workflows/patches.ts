// Every patch the workflows have, in one place, and one marker for all of them in a run that this
// code starts.
//
// `patched(id)` records a marker and upserts the TemporalChangeVersion search attribute the first
// time a run reaches it: with nine patches, a research run and its steps wrote about twenty-five
// of those events and as many visibility updates, for decisions that are the same in every new
// run. A run started now records `lean-history` once per execution and takes every patch below
// without recording it; a run started before replays its own markers exactly as it recorded them
// (`lean-history` is absent from its history, so each patch is asked as before). One that was
// running at the deploy records `lean-history` when it first reaches a patch after it, which
// turns on whatever patches it has not reached yet — as their own markers would have.
//
// A new patch is `patched('its-id')` alone until the next generation folds it in (a new LEAN
// id whose check precedes the old one's). Generation 2 (`lean-history-2`) folds in
// 'turn-discovers-mcp' and 'plan-by-row-sync': a run started now records that one marker and takes
// every patch; a run recorded with `lean-history` takes the generation-1 patches from it and asks
// for the later ones as before (a replay finds no marker, so it takes the old path it recorded).
import { patched } from '@temporalio/workflow';

const LEAN = 'lean-history';
const LEAN_2 = 'lean-history-2';
/** The patches after generation 1: only generation 2 (or their own marker) turns them on. */
const AFTER_LEAN: ReadonlySet<PatchId> = new Set<PatchId>(['turn-discovers-mcp', 'plan-by-row-sync']);

export type PatchId =
  | 'react-researcher'
  | 'sandbox-coder'
  | 'mcp-tools'
  | 'researcher-python'
  | 'fold-tool-results'
  | 'knowledge-base'
  | 'gap-reflection'
  | 'claim-check'
  | 'row-sync'
  | 'local-row-writes'
  | 'deadline-after-review'
  | 'turn-discovers-mcp'
  | 'plan-by-row-sync';

/** Whether this run takes the patched code path. */
export function hasPatch(id: PatchId): boolean {
  return (AFTER_LEAN.has(id) ? patched(LEAN_2) : lean()) || patched(id);
}

/** Whether this run started on code with the lean history: it also skips upserts that repeat its
 *  start attributes and runs its short lookups as local activities. */
export function lean(): boolean {
  return patched(LEAN_2) || patched(LEAN);
}
