// The chat answer's content while the report is written: its draft as a transcript
// (src/shared/draft.ts DraftTranscript), headed by a line that says it is a draft.
import type { StoredEvent } from '../../activities/store/events';
import { DraftTranscript } from '../../shared/draft';
import { DraftEventData } from '../../shared/events';

const REPORT_DRAFT_NOTE = '*Draft, as the model writes it: its citations are checked next, and the checked report follows.*\n\n';

export class ChatDraft {
  private readonly transcript = new DraftTranscript(REPORT_DRAFT_NOTE);

  /** The content a stored event adds to the answer now (empty when nothing). */
  take(e: Pick<StoredEvent, 'type' | 'data'>): string {
    if (e.type !== 'draft') return '';
    const parsed = DraftEventData.safeParse(e.data);
    return parsed.success ? this.transcript.take(parsed.data) : '';
  }

  /** What follows the draft once the run's answer is known. */
  ending(final: string): string {
    return this.transcript.ending(final);
  }
}
