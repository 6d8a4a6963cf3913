// Patches, one marker an execution. Each id the SDK's `patched` is asked for records a marker and
// makes the SDK upsert the TemporalChangeVersion search attribute: an event, and a visibility write
// on the server, per id per execution. An execution started on this code records one patch,
// CURRENT_PATCH, and takes every patch folded into it without asking for each. A history recorded
// before it has no CURRENT_PATCH marker, so its replay asks for each patch as it did when it ran.
//
// A later change is folded into a new current patch the same way: CURRENT_PATCH is asked for
// first, then (for a history recorded before it) each current patch before it, newest first
// (CURRENT_PATCHES). Each still answers for every FoldedPatch, and for the changes that were
// current when it was (CURRENT_PATCHES), not for those of a later one.
import { patched } from '@temporalio/workflow';

/** The patches an execution with a current patch takes without a marker of their own. */
export type FoldedPatch =
  | 'background-reads-pages'
  | 'background-in-one'
  | 'report-with-claim-check'
  | 'user-memory'
  | 'notify-on-change'
  | 'compress-in-last-turn'
  | 'tools-in-turn';

/**
 * What only a current patch gates (no marker of its own ever existed):
 * - `row-keeps-view` (current-2026-11-28 on): the run's row is also written after a step's next
 *   attempt starts and after an ignored signal, not only after the changes the run publishes, so
 *   that the API can answer an open run's status from the view the row keeps (a status query
 *   costs a workflow task).
 * - `classify-in-background` (current-2026-11-29 on): a run that can ask no clarifying question
 *   has the coordinator's classification made inside the background phase's activity
 *   (classifyThenBackground): one activity task and one workflow task fewer.
 */
export type CurrentChange = 'row-keeps-view' | 'classify-in-background';

/** The current patches, newest first, each with the changes it gates. */
const CURRENT_PATCHES: readonly { id: string; changes: readonly CurrentChange[] }[] = [
  { id: 'current-2026-11-29', changes: ['row-keeps-view', 'classify-in-background'] },
  { id: 'current-2026-11-28', changes: ['row-keeps-view'] },
  { id: 'current-2026-11', changes: [] },
];

/** Marks executions that started on code with every FoldedPatch and every CurrentChange. */
export const CURRENT_PATCH = CURRENT_PATCHES[0]!.id;

/** One execution's answer to the patches: made in its first activation, before any other patch. */
export class Patches {
  /** The execution started on code with every FoldedPatch (a current patch, this one or an earlier). */
  readonly current: boolean;
  /** The CurrentChange ids of the current patch the execution started on. */
  private readonly changes: ReadonlySet<CurrentChange>;

  /** `startedCurrent`: the execution's input says it started on code with every FoldedPatch (a
   *  step the run starts on it): no marker is asked for, or recorded, at all. Steps take no
   *  CurrentChange. */
  constructor(startedCurrent?: boolean) {
    // Newest first, and no further once one answers: a new execution records the newest alone.
    const found = startedCurrent === true ? undefined : CURRENT_PATCHES.find((p) => patched(p.id));
    this.current = startedCurrent === true || found !== undefined;
    this.changes = new Set(found?.changes ?? []);
  }

  has(id: FoldedPatch): boolean {
    return this.current || patched(id);
  }

  /** Whether the execution takes a CurrentChange: those of the current patch it started on. */
  takes(change: CurrentChange): boolean {
    return this.changes.has(change);
  }
}
