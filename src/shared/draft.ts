// A run's draft as its `draft` events build it (src/shared/events.ts DraftEventData): each part's
// text so far, a part that starts again emptied first (Draft: the web page, MCP). And the same as
// a transcript that is only ever appended to (DraftTranscript: the chat endpoint, the CLI): the
// report (or a direct answer) as the model writes it, sections one after another in their order
// (a later section written meanwhile waits for the one before it to end), a part that starts
// again said so in the text, and at the end the checked report unless the draft said it all.

/** A `draft` event's data (DraftEventData in events.ts; lint keeps a module the workflow reaches from importing `./events`). */
export interface DraftPiece {
  part: string;
  heading?: string | undefined;
  offset: number;
  text: string;
  restart?: boolean | undefined;
  reason?: string | undefined;
  final?: boolean | undefined;
}

export interface DraftPart {
  part: string;
  heading?: string | undefined;
  text: string;
  /** Whether the part's writer has finished this text (its last event said so). */
  done: boolean;
  /** How many times the part started again. */
  restarts: number;
}

/** Parts in reading order: the report (or the answer), then sections by number. */
const order = (part: string) => (part.startsWith('section-') ? Number(part.slice(8)) : 0);

export class Draft {
  private readonly parts = new Map<string, DraftPart>();

  /** Takes one event; what it did to its part (`restart` when the part's text was dropped first). */
  apply(d: DraftPiece): 'append' | 'restart' | 'ignored' {
    let p = this.parts.get(d.part);
    let what: 'append' | 'restart' = 'append';
    if (!p) {
      p = { part: d.part, heading: d.heading, text: '', done: false, restarts: 0 };
      this.parts.set(d.part, p);
    } else if (d.restart) {
      p.text = '';
      p.done = false;
      p.restarts++;
      what = 'restart';
    }
    // A piece that does not continue the text (a client that joined mid-draft) waits for a restart.
    if (d.offset !== p.text.length) return 'ignored';
    p.text += d.text;
    if (d.final) p.done = true;
    return what;
  }

  list(): DraftPart[] {
    return [...this.parts.values()].sort((a, b) => order(a.part) - order(b.part));
  }

  /** The draft as one Markdown text: a section under its heading. */
  markdown(): string {
    return draftMarkdown(this.list());
  }
}

/** Parts of a draft as one Markdown text, in the order given: a section under its heading. */
export function draftMarkdown(parts: readonly Pick<DraftPart, 'heading' | 'text'>[]): string {
  return parts.map((p) => (p.heading ? `## ${p.heading}\n\n${p.text}` : p.text)).join('\n\n');
}

export class DraftTranscript {
  constructor(
    /** Written before the first text of a report (not of a direct answer). */
    private readonly note = '',
  ) {}

  private readonly draft = new Draft();
  /** The text given out so far. */
  private sent = '';
  /** How much of each part's text has been sent, and the parts whose turn is over. */
  private readonly shown = new Map<string, number>();
  private readonly finished = new Set<string>();

  /** The text a `draft` event adds to the transcript now (empty when nothing). */
  take(d: DraftPiece): string {
    const what = this.draft.apply(d);
    let out = '';
    if (what === 'restart' && this.shown.get(d.part)) {
      out += `\n\n*(This part starts again: ${d.reason ?? 'it is being written again'}.)*\n\n`;
      this.shown.set(d.part, 0);
      this.finished.delete(d.part);
    }
    out += this.catchUp();
    this.sent += out;
    return out;
  }

  /** The text of the parts whose turn it is: the first unfinished one, and the ones after it once it ends. */
  private catchUp(): string {
    let out = '';
    let section = 0;
    for (const p of this.draft.list()) {
      // Sections go in their numbers' order: one whose predecessor has not come yet waits.
      if (p.part.startsWith('section-') && Number(p.part.slice(8)) !== ++section) break;
      if (this.finished.has(p.part)) continue;
      const shown = this.shown.get(p.part) ?? 0;
      if (shown === 0 && p.text) {
        if (!this.sent && !out && p.part !== 'answer') out += this.note;
        const before = this.sent + out;
        if (p.heading) out += `${before && before !== this.note ? '\n\n' : ''}## ${p.heading}\n\n`;
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
