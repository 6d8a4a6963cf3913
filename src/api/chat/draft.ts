// A run's draft as a chat answer's content, as it is written: the report (or a direct answer) as
// the model writes it, sections one after another in their order (a later section written
// meanwhile waits for the one before it to end), a part that starts again said so in the text (a
// chat client cannot take back what it was sent). The content ends with the checked report
// (`ending`), unless the draft already said it all.
import type { StoredEvent } from '../../activities/store/events';
import { Draft } from '../../shared/draft';
import { DraftEventData } from '../../shared/events';

const REPORT_DRAFT_NOTE = '*Draft, as the model writes it: its citations are checked next, and the checked report follows.*\n\n';

export class ChatDraft {
  private readonly draft = new Draft();
  /** The content sent so far. */
  private sent = '';
  /** How much of each part's text has been sent, and the parts whose turn is over. */
  private readonly shown = new Map<string, number>();
  private readonly finished = new Set<string>();

  /** The content a `draft` event adds to the answer now (empty when nothing). */
  take(e: Pick<StoredEvent, 'type' | 'data'>): string {
    if (e.type !== 'draft') return '';
    const parsed = DraftEventData.safeParse(e.data);
    if (!parsed.success) return '';
    const what = this.draft.apply(parsed.data);
    let out = '';
    if (what === 'restart' && this.shown.get(parsed.data.part)) {
      out += `\n\n*(This part starts again: ${parsed.data.reason ?? 'it is being written again'}.)*\n\n`;
      this.shown.set(parsed.data.part, 0);
    }
    out += this.catchUp();
    this.sent += out;
    return out;
  }

  /** The text of the parts whose turn it is: the first unfinished one, and the ones after it once it ends. */
  private catchUp(): string {
    let out = '';
    for (const p of this.draft.list()) {
      if (this.finished.has(p.part)) continue;
      const shown = this.shown.get(p.part) ?? 0;
      if (shown === 0 && p.text) {
        if (!this.sent && !out && p.part !== 'answer') out += REPORT_DRAFT_NOTE;
        if (p.heading) out += `${this.sent || out ? '\n\n' : ''}## ${p.heading}\n\n`;
      }
      out += p.text.slice(shown);
      this.shown.set(p.part, p.text.length);
      if (!p.done) break;
      this.finished.add(p.part);
    }
    return out;
  }

  /** What follows the draft once the run's answer is known: the rest of it, or the checked report whole. */
  ending(final: string): string {
    if (!this.sent) return final;
    if (final.startsWith(this.sent)) return final.slice(this.sent.length);
    return `\n\n---\n\n**The report, its citations checked:**\n\n${final}`;
  }
}
