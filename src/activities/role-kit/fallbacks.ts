// What a role does when the model cannot give a usable answer: every role has a fallback (SPEC:
// degrade, don't die), and each fallback taken is written down as a note of the run, so the
// published report says which one and why. The notes are documents of kind 'fallback'; the
// reporter reads them with the workflow's own notes.
import { ApplicationFailure } from '@temporalio/activity';
import { scopedActivityId } from '../attempt';
import { ErrorType } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { Store } from '../store';

export const FALLBACK_KIND = 'fallback';

/** The note writeCitedDocument leaves when it listed the sources because the model wrote no brief. */
export const BACKGROUND_FALLBACK_NOTE = 'fallback/background/background';

/** Failures after which a role falls back instead of failing the run: the model answered, but not
 *  usably (after its repairs), too slowly, too long for its window, or the server lacks a feature. */
const GIVE_UP_TYPES = new Set<string>([
  ErrorType.LlmInvalidOutput,
  ErrorType.LlmTooSlow,
  ErrorType.LlmContextLength,
  ErrorType.LlmUnsupported,
  ErrorType.LlmBadRequest,
]);

/** True for a model failure a role answers with its fallback; outages and auth errors are not. */
export function modelGaveUp(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure && err.type !== undefined && err.type !== null && GIVE_UP_TYPES.has(err.type);
}

/** A note's key for an activity that makes one model call: stable across the retries of one
 *  activity, distinct between activities of a run (and between the parts of one: withinCall). */
export function activityKey(): string {
  return scopedActivityId();
}

/**
 * Records that `role` fell back (`what`: what the run did instead) because of `err` (a failure, or
 * the reason in words: "the model …"). Keyed by role
 * and `key`, so an activity retried after recording it writes the same note once.
 */
export async function noteFallback(
  store: Pick<Store, 'saveDocument'>,
  researchId: string,
  role: string,
  key: string,
  what: string,
  err: unknown,
): Promise<string> {
  const reason = err instanceof Error ? err.message : String(err);
  const note = `Fallback (${role}): ${what}, because the model ${reasonInWords(err)}.`;
  const type = err instanceof ApplicationFailure ? err.type : undefined;
  await saveNote(store, researchId, role, key, note, { role, reason: summarize(reason, 500), type });
  return note;
}

/**
 * A note for the report about something code decided instead of the model (a repaired plan, a
 * replaced locale, evidence listed beside uncited text), in the same place as the fallbacks' notes.
 */
export async function noteCorrection(
  store: Pick<Store, 'saveDocument'>,
  researchId: string,
  role: string,
  key: string,
  what: string,
): Promise<string> {
  const note = `Correction (${role}): ${what}.`;
  await saveNote(store, researchId, role, key, note, { role, correction: true });
  return note;
}

/** Keyed by role and key, so an activity retried after writing it writes the same note once. */
async function saveNote(
  store: Pick<Store, 'saveDocument'>,
  researchId: string,
  role: string,
  key: string,
  note: string,
  meta: Record<string, unknown>,
): Promise<void> {
  await store.saveDocument(researchId, {
    key: `fallback/${role}/${key}`,
    kind: FALLBACK_KIND,
    content: note,
    summary: summarize(note, 200),
    sourceIds: [],
    meta,
  });
}

/** Roles whose notes belong to one version of the report (a rewrite writes its own). */
const REPORT_ROLES = ['reporter', 'claim-check'];

/** The notes of every fallback the run took, in key order. A rewrite's report (version 2 and up,
 *  whose notes are keyed `…@v<n>`) has the research's notes and its own report's, not those of
 *  another version's report. */
export async function fallbackNotes(store: Pick<Store, 'getDocumentsOfKind'>, researchId: string, version?: number): Promise<string[]> {
  const own = (key: string) => {
    const at = /@v(\d+)$/.exec(key);
    if (at) return Number(at[1]) === version;
    return !(version !== undefined && version > 1 && REPORT_ROLES.some((r) => key.startsWith(`fallback/${r}/`)));
  };
  return (await store.getDocumentsOfKind(researchId, FALLBACK_KIND)).filter((d) => own(d.key)).map((d) => d.content);
}

function reasonInWords(err: unknown): string {
  if (typeof err === 'string') return err;
  const type = err instanceof ApplicationFailure ? err.type : undefined;
  switch (type) {
    case ErrorType.LlmTooSlow:
      return 'did not answer within its time limit';
    case ErrorType.LlmContextLength:
      return 'was given more than its context window holds, even trimmed';
    case ErrorType.LlmUnsupported:
      return 'server lacks a feature this call needs';
    case ErrorType.LlmBadRequest:
      return 'server refused the request';
    default:
      return 'gave no usable answer after repair requests';
  }
}
