// What changed between a scheduled run's report and the schedule's previous one, as the run keeps
// it (its status view), the schedule's recent runs show it and an `on_change` webhook sends it.
// The lists are bounded (the comparison's result travels through the workflow's history); the
// counts say how many there were, and the report's "What changed since" section lists them all.
import { z } from 'zod';

/** When a schedule's runs call their webhook with `report_ready`: every report, or only a report
 *  whose comparison with the previous one found a new source or a changed claim or figure. */
export const NotifyWhen = z.enum(['always', 'on_change']);
export type NotifyWhen = z.infer<typeof NotifyWhen>;

/** Entries per list the summary carries. */
export const CHANGES_LISTED = 5;

export const ChangedSource = z.object({ title: z.string(), url: z.string() });
export type ChangedSource = z.infer<typeof ChangedSource>;

export const ChangedClaim = z.object({
  about: z.string(),
  /** What the previous report said, and what the current findings say instead. */
  before: z.string(),
  now: z.string(),
  /** The current source that says `now`. */
  source: ChangedSource,
});
export type ChangedClaim = z.infer<typeof ChangedClaim>;

export const RunChanges = z.object({
  /** The run compared with (the schedule's previous report) and when it started (ISO 8601). */
  previousId: z.string(),
  since: z.string(),
  /** Sources the report cites that the previous run never retrieved (at most CHANGES_LISTED listed). */
  newSources: z.array(ChangedSource),
  newSourceCount: z.number().int(),
  /** Claims and figures that changed, kept only where the stored texts bear them out. */
  changedClaims: z.array(ChangedClaim),
  changedClaimCount: z.number().int(),
  /** Sources the previous report cited that this run did not find (not counted as a change). */
  goneSourceCount: z.number().int(),
  /** False when the model gave no usable comparison (its fallback): only sources were compared. */
  claimsCompared: z.boolean(),
});
export type RunChanges = z.infer<typeof RunChanges>;
