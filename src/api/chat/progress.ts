// A run's events as lines a chat client shows while it waits (as reasoning): phases, the plan, steps,
// searches, pages read, checks. Events without anything to say (usage) give none.
import type { StoredEvent } from '../../activities/store/events';
import { summarize } from '../../shared/plain';
import { plural } from '../../shared/plural';

const PHASES: Record<string, string> = {
  coordinating: 'Reading the question…',
  planning: 'Planning the research…',
  reviewing: 'The plan is ready for review.',
  queued: 'Waiting for a free slot for this tenant…',
  researching: 'Researching…',
  reporting: 'Writing the report…',
};

type Data = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : '');
const list = (v: unknown) => (Array.isArray(v) ? (v as Data[]) : []);

function planLines(d: Data): string {
  const steps = list(d.steps).map((s, i) => `  ${i + 1}. ${summarize(str(s.title), 160)}`);
  return [`Plan (version ${String(d.version)}): ${summarize(str(d.title), 200)}`, ...steps].join('\n');
}

const LINES: Record<string, (d: Data) => string | undefined> = {
  started: (d) => `Research started: ${summarize(str(d.question), 200)}`,
  phase: (d) => PHASES[str(d.phase)],
  plan: planLines,
  step: (d) =>
    `Step "${summarize(str(d.title), 120)}": ${str(d.status)}${Number(d.attempts) > 1 ? ` (attempt ${String(d.attempts)})` : ''}` +
    (d.summary ? ` — ${summarize(str(d.summary), 240)}` : ''),
  search: (d) =>
    `Searched: ${list(d.queries)
      .map((q) => `"${summarize(str(q.query), 100)}" (${q.error ? 'failed' : `${String(q.results)} results`})`)
      .join(', ')}`,
  crawl: (d) =>
    `Read: ${list(d.pages)
      .map((p) => `${summarize(str(p.url), 160)}${p.status === 'ok' ? '' : ` (${str(p.status)})`}`)
      .join(', ')}`,
  tool: (d) => (d.tool === 'python' ? `Ran Python (${str(d.status)}, ${plural(Number(d.artifacts), 'file')} kept)` : undefined),
  verdict: (d) => `Check of step ${str(d.step)}: ${d.passed ? 'passed' : `sent back — ${summarize(str(d.feedback), 200)}`}`,
  think: (d) => `Supervisor: ${summarize(str(d.thought), 300)}`,
  steer: (d) => `Steering: ${summarize(str(d.summary), 200)}`,
  report: (d) => `Report written: ${summarize(str(d.title), 200)}`,
};

/** The line an event shows, or undefined. */
export function progressLine(e: Pick<StoredEvent, 'type' | 'data'>): string | undefined {
  return LINES[e.type]?.(e.data);
}
