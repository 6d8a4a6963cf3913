// Patches, one marker an execution. Each id the SDK's `patched` is asked for records a marker and
// makes the SDK upsert the TemporalChangeVersion search attribute: an event, and a visibility write
// on the server, per id per execution. An execution started on this code records one patch,
// CURRENT_PATCH, and takes every patch folded into it without asking for each. A history recorded
// before it has no CURRENT_PATCH marker, so its replay asks for each patch as it did when it ran.
//
// A later change is folded into a new current patch the same way: CURRENT_PATCH is asked for
// first, then (for a history recorded before it) the current patch before it, EARLIER_PATCH, which
// still answers for the FoldedPatch ids but not for the changes only CURRENT_PATCH gates.
import { patched } from '@temporalio/workflow';

/** Marks executions that started on code with every FoldedPatch and every CurrentChange. */
export const CURRENT_PATCH = 'current-2026-11-28';
/** The current patch before CURRENT_PATCH: every FoldedPatch, none of the CurrentChange ids. */
export const EARLIER_PATCH = 'current-2026-11';

/** The patches an execution with CURRENT_PATCH takes without a marker of their own. */
export type FoldedPatch =
  | 'background-reads-pages'
  | 'background-in-one'
  | 'report-with-claim-check'
  | 'user-memory'
  | 'notify-on-change'
  | 'compress-in-last-turn'
  | 'tools-in-turn';

/**
 * What only CURRENT_PATCH gates (no marker of its own ever existed):
 * - `row-keeps-view`: the run's row is also written after a step's next attempt starts and after
 *   an ignored signal, not only after the changes the run publishes, so that the API can answer an
 *   open run's status from the view the row keeps (a status query costs a workflow task).
 */
export type CurrentChange = 'row-keeps-view';

/** One execution's answer to the patches: made in its first activation, before any other patch. */
export class Patches {
  /** The execution started on code with every FoldedPatch (CURRENT_PATCH or EARLIER_PATCH). */
  readonly current: boolean;
  /** The execution started on this code (CURRENT_PATCH): every CurrentChange too. */
  private readonly newest: boolean;

  /** `startedCurrent`: the execution's input says it started on code with every FoldedPatch (a
   *  step the run starts on it): no marker is asked for, or recorded, at all. Steps take no
   *  CurrentChange. */
  constructor(startedCurrent?: boolean) {
    this.newest = startedCurrent !== true && patched(CURRENT_PATCH);
    this.current = startedCurrent === true || this.newest || patched(EARLIER_PATCH);
  }

  has(id: FoldedPatch): boolean {
    return this.current || patched(id);
  }

  /** Each CurrentChange is taken by the executions that started on this code. */
  takes(_change: CurrentChange): boolean {
    return this.newest;
  }
}
