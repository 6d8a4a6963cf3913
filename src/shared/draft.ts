// A run's draft as its `draft` events build it (src/shared/events.ts DraftEventData): each part's
// text so far, a part that starts again emptied first. The web page, the chat endpoint and the
// CLI read the events this one way.
import type { DraftEventData } from './events';

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
  apply(d: DraftEventData): 'append' | 'restart' | 'ignored' {
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

  get empty(): boolean {
    return this.parts.size === 0;
  }

  /** The draft as one Markdown text: a section under its heading. */
  markdown(): string {
    return this.list()
      .map((p) => (p.heading ? `## ${p.heading}\n\n${p.text}` : p.text))
      .join('\n\n');
  }
}
