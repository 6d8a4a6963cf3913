// A writer's answer shown while the model writes it: the streamed text of one JSON field (the
// report's `markdown`, a direct answer) goes into the run's event log as `draft` events, a few a
// second, never into the workflow's history. A request that begins again (a repair, the draft
// asked for again, a new activity attempt after a worker died) says so with `restart`. The draft
// is a courtesy to the reader: a write that fails is logged and the call goes on.
import { Context } from '@temporalio/activity';
import type { DraftEventData } from '../../shared/events';
import type { TextSink } from '../llm/model-request';
import { stripReasoning } from '../llm/call';
import { partialField } from '../llm/partial-json';
import type { EventsTable } from '../store/events';

/** Between two writes of one draft: a few events a second, each with what came meanwhile. */
export const DRAFT_EVERY_MS = 300;

export interface DraftPart {
  part: string;
  heading?: string | undefined;
  version?: number | undefined;
}

export class DraftStream implements TextSink {
  private raw = '';
  private shown = '';
  private requests = 0;
  private pendingRestart = false;
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private readonly attempt: number;

  constructor(
    private readonly events: Pick<EventsTable, 'append'>,
    private readonly researchId: string,
    private readonly at: DraftPart,
    /** The JSON field streamed; the whole text when the answer is not JSON. */
    private readonly field: string | undefined,
    private readonly everyMs = DRAFT_EVERY_MS,
  ) {
    this.attempt = Context.current().info.attempt;
  }

  begin(): void {
    this.flush();
    this.requests++;
    this.raw = '';
    this.shown = '';
    // The first request of a first attempt starts the part; any other starts it again.
    this.pendingRestart = this.requests > 1 || this.attempt > 1;
  }

  update(raw: string): void {
    this.raw = raw;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.everyMs);
  }

  /** Writes what is left (marked final when the model's answer came whole); resolves when every
   *  write of this draft has ended. */
  async close(complete: boolean): Promise<void> {
    this.flush(complete);
    await this.writes;
  }

  /** The call's result, the draft closed as complete; a failed call's draft is closed as it stands. */
  async around<T>(call: Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await call;
    } catch (err) {
      await this.close(false);
      throw err;
    }
    await this.close(true);
    return result;
  }

  private text(): string {
    // A reasoning model's thoughts before the answer are never shown (nor parsed as the answer).
    const answer = stripReasoning(this.raw);
    if (this.field === undefined) return answer;
    return partialField(answer, this.field)?.text ?? '';
  }

  private flush(final = false): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.text();
    // A field's text only grows while a request streams; anything else is not shown. The last
    // write says the text is complete, even with nothing new in it.
    const grew = text.startsWith(this.shown) && text.length > this.shown.length;
    if (!grew && !(final && this.shown)) return;
    const data: DraftEventData = {
      part: this.at.part,
      ...(this.at.heading ? { heading: this.at.heading } : {}),
      ...(this.at.version ? { version: this.at.version } : {}),
      attempt: this.attempt,
      offset: this.shown.length,
      text: grew ? text.slice(this.shown.length) : '',
      ...(final ? { final: true } : {}),
      ...(this.pendingRestart
        ? {
            restart: true,
            reason:
              this.requests > 1
                ? 'the draft is being written again'
                : 'an earlier attempt stopped before it finished (a worker stopped, or the call failed); it is being written again',
          }
        : {}),
    };
    const key = `draft:${this.at.part}:v${this.at.version ?? 1}:${this.attempt}:${this.requests}:${data.offset}${final ? ':end' : ''}`;
    if (grew) this.shown = text;
    this.pendingRestart = false;
    this.writes = this.writes.then(() =>
      this.events.append(this.researchId, [{ key, type: 'draft', data }]).catch((err: unknown) => {
        Context.current().log.warn('a draft event was not written; the report is not affected', {
          researchId: this.researchId,
          part: this.at.part,
          error: err instanceof Error ? err.message : String(err),
        });
      }),
    );
  }
}
