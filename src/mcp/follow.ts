// follow_research: waits a bounded time for a run to move on, reporting each event it reads as an
// MCP progress notification (the report's draft too, piece by piece, as the model writes it). It
// returns at the run's end, when the run waits for the user (a plan to review, a question to
// answer) or at the timeout, with the last event id to continue from: no tool call blocks for a
// whole run.
import type { ApiClient, RunEvent } from '../cli/api-client';
import { Draft } from '../shared/draft';
import { plural } from '../shared/plural';

/** Seconds a follow waits when the caller does not say, and the most it may ask for. */
export const FOLLOW_DEFAULT_SECONDS = 60;
export const FOLLOW_MAX_SECONDS = 300;

export interface FollowResult {
  id: string;
  /** Events read this time, oldest first, each in one line. */
  lines: string[];
  /** Pass as `after` to the next follow: nothing is read twice. */
  lastEventId: number;
  /** Why the follow returned. */
  stopped: 'done' | 'awaiting_input' | 'timeout';
  /** The `done` event's status when the run ended. */
  status?: string;
}

/** One event as a short line a person or a model reads. */
export function describeEvent(e: RunEvent): string {
  switch (e.type) {
    case 'started':
      return `started: ${e.data.question}`;
    case 'plan':
      return `plan v${e.data.version}: ${e.data.title} (${e.data.steps.map((s) => (s.description ? `${s.title}: ${s.description}` : s.title)).join('; ')})`;
    case 'phase':
      return `phase ${e.data.phase} (${e.data.status})`;
    case 'status':
      return `status ${e.data.status}${e.data.phase ? ` in ${e.data.phase}` : ''}`;
    case 'step':
      return `step ${e.data.title}: ${e.data.status}`;
    case 'search':
      return `searched: ${e.data.queries.map((q) => q.query).join('; ')}`;
    case 'crawl':
      return `read ${plural(e.data.pages.length, 'page')}: ${e.data.pages.map((p) => p.url).join(' ')}`;
    case 'draft':
      return `${e.data.restart ? `${e.data.part} starts again (${e.data.reason ?? 'written again'}); ` : ''}${e.data.part} as written: ${e.data.text}`;
    case 'report':
      return `report written: ${e.data.title}`;
    case 'done':
      return `done: ${e.data.status}${e.data.error ? ` (${e.data.error})` : ''}`;
    default:
      return e.type;
  }
}

export interface FollowOptions {
  after: number;
  timeoutMs: number;
  /** Called for every event read (the progress notification). */
  onEvent(e: RunEvent, n: number): Promise<void>;
  /** The tool call's own signal: a client that cancels the call ends the wait. */
  signal?: AbortSignal;
}

export async function followRun(client: ApiClient, id: string, o: FollowOptions): Promise<FollowResult> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), o.timeoutMs);
  const onCancel = () => stop.abort();
  o.signal?.addEventListener('abort', onCancel);
  const result: FollowResult = { id, lines: [], lastEventId: o.after, stopped: 'timeout' };
  // The report's draft pieces are progress notifications as they come; the result says only how
  // far the draft got (the checked report is get_report's).
  const draft = new Draft();
  try {
    for await (const e of client.events(id, o.after, stop.signal)) {
      if (e.type === 'draft') draft.apply(e.data);
      else result.lines.push(describeEvent(e));
      result.lastEventId = e.id;
      await o.onEvent(e, result.lines.length);
      if (e.type === 'done') {
        result.stopped = 'done';
        result.status = e.data.status;
        break;
      }
      if (e.type === 'status' && e.data.status === 'awaiting_review') {
        result.stopped = 'awaiting_input';
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onCancel);
    stop.abort();
  }
  const written = draft.list().reduce((n, p) => n + p.text.length, 0);
  if (written)
    result.lines.push(`draft: ${written} characters written so far (a draft; get_report reads the checked report once the run ends)`);
  return result;
}
