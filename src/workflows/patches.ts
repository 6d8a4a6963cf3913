// Patches, one marker an execution. Each id the SDK's `patched` is asked for records a marker and
// makes the SDK upsert the TemporalChangeVersion search attribute: an event, and a visibility write
// on the server, per id per execution. An execution started on this code records one patch,
// CURRENT_PATCH, and takes every patch folded into it without asking for each. A history recorded
// before it has no CURRENT_PATCH marker, so its replay asks for each patch as it did when it ran.
//
// A later patch is asked for on its own, as before; when several have piled up, a new current
// patch can fold them in the same way (it must then also answer for this one).
import { patched } from '@temporalio/workflow';

/** Marks executions that started on code with every FoldedPatch (and the changes it gates). */
export const CURRENT_PATCH = 'current-2026-11';

/** The patches an execution with CURRENT_PATCH takes without a marker of their own. */
export type FoldedPatch =
  | 'background-reads-pages'
  | 'background-in-one'
  | 'report-with-claim-check'
  | 'user-memory'
  | 'notify-on-change'
  | 'compress-in-last-turn'
  | 'tools-in-turn';

/** One execution's answer to the patches: made in its first activation, before any other patch. */
export class Patches {
  /** The execution started on this code (or was replayed from a history that did). */
  readonly current: boolean;

  /** `startedCurrent`: the execution's input says it started on this code (a step the run starts
   *  on it): no marker is asked for, or recorded, at all. */
  constructor(startedCurrent?: boolean) {
    this.current = startedCurrent === true || patched(CURRENT_PATCH);
  }

  has(id: FoldedPatch): boolean {
    return this.current || patched(id);
  }
}
