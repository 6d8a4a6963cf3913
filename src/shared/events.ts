// The run's event log: each event type and its data, as the activities append them
// (src/activities/run-events.ts, roles/conversation.ts, roles/judge.ts, roles/supervisor.ts, persist.ts) and as
// GET /v1/research/:id/events streams them to the CLI, the web page and the tests. The stream adds
// the event's number in the log (the SSE id) and, to its data, the time it was logged (`at`).
import { z } from 'zod';
import { StepStatus, type Steer } from './messages';
import { Outcome, Phase, PlanBrief, RunStatus, StepType, Usage } from './schemas';

/** Every kind of steering message, no more and no fewer (tsc fails when Steer gains one). */
const STEER_KINDS: Record<Steer['kind'], true> = {
  guidance: true,
  banDomains: true,
  mustRead: true,
  wrapUp: true,
  addStep: true,
  dropStep: true,
  editStep: true,
};
export const SteerKind = z.enum(Object.keys(STEER_KINDS) as [Steer['kind'], ...Steer['kind'][]]);
export type SteerKind = z.infer<typeof SteerKind>;

/** `started`: the run's first write. */
export const StartedEventData = z.object({ question: z.string() });
export type StartedEventData = z.infer<typeof StartedEventData>;

/** `plan`: a new plan version (before the phase change that shows it for review). */
export const PlanEventData = z.object({
  version: z.number().int(),
  title: z.string(),
  /** The planner's reasoning, and the brief the plan rests on (absent in events written before). */
  thought: z.string().optional(),
  brief: PlanBrief.optional(),
  steps: z.array(
    z.object({ id: z.string(), title: z.string(), description: z.string().optional(), type: StepType, dependsOn: z.array(z.string()) }),
  ),
});
export type PlanEventData = z.infer<typeof PlanEventData>;

/** `phase`: the run moved to another phase; planVersion 0 before there is a plan. */
export const PhaseEventData = z.object({ phase: Phase, status: RunStatus, planVersion: z.number().int() });
export type PhaseEventData = z.infer<typeof PhaseEventData>;

/** `status`: the run's status changed to one other than running (a wait, or the end). */
export const StatusEventData = z.object({ status: RunStatus.exclude(['running']), phase: Phase.nullable() });
export type StatusEventData = z.infer<typeof StatusEventData>;

/** `step`: a step of the plan started, ended or started again (pending steps have none). */
export const StepEventData = z.object({
  id: z.string(),
  title: z.string(),
  status: StepStatus.exclude(['pending']),
  attempts: z.number().int(),
  summary: z.string().optional(),
});
export type StepEventData = z.infer<typeof StepEventData>;

/** Where a researcher's tool call happened: the step and its attempt; and, when its result was
 *  over its budget, how many pages or hits were shortened and how many left out (not shown). */
const ToolCallPlace = z.object({
  step: z.string(),
  attempt: z.number().int(),
  budget: z.object({ tokens: z.number().int(), shortened: z.number().int(), leftOut: z.number().int() }).optional(),
});

/** `search`: one search call of a researcher: its queries, their hits, and the sources it added. */
export const SearchEventData = ToolCallPlace.extend({
  queries: z.array(z.object({ query: z.string(), results: z.number().int(), error: z.string().optional() })),
  sources: z.number().int(),
});
export type SearchEventData = z.infer<typeof SearchEventData>;

/** `crawl`: one page-reading call of a researcher: each page, read or why not. */
export const CrawlEventData = ToolCallPlace.extend({
  pages: z.array(
    z.object({
      url: z.string(),
      status: z.enum(['ok', 'blocked', 'skipped', 'failed']),
      reason: z.string().optional(),
      title: z.string().optional(),
    }),
  ),
  sources: z.number().int(),
});
export type CrawlEventData = z.infer<typeof CrawlEventData>;

/** `tool`: any other tool call of a researcher: a python run (how it ended, files kept), or text. */
export const ToolEventData = z.union([
  ToolCallPlace.extend({
    tool: z.literal('python'),
    status: z.enum(['ok', 'error', 'timeout', 'oom', 'crashed']),
    artifacts: z.number().int(),
  }),
  ToolCallPlace.extend({ chars: z.number().int() }),
]);
export type ToolEventData = z.infer<typeof ToolEventData>;

/** `verdict`: the check of a step's result; a failed one sends the step back with the feedback. */
export const VerdictEventData = z.object({
  step: z.string(),
  attempt: z.number().int(),
  passed: z.boolean(),
  feedback: z.string().optional(),
});
export type VerdictEventData = z.infer<typeof VerdictEventData>;

/** `think`: a reflection written down: by the supervisor after a wave of steps (researchMode
 *  `supervisor`, with the wave), or by a researcher between its tool calls (with the step). */
export const ThinkEventData = z.object({
  wave: z.number().int().optional(),
  step: z.string().optional(),
  attempt: z.number().int().optional(),
  thought: z.string(),
});
export type ThinkEventData = z.infer<typeof ThinkEventData>;

/** `steer`: a steering message the run took, and what it did (the note it wrote). */
export const SteerEventData = z.object({ kind: SteerKind, summary: z.string() });
export type SteerEventData = z.infer<typeof SteerEventData>;

/** `moved`: `dev` started on changed workflow code while the run was open, and the run could not go
 *  on where it was (its history does not replay on the new code, and the old code is gone): it went
 *  back to the last point the new code replays to, and goes on from there on the new build. */
export const MovedEventData = z.object({
  /** The build it goes on with. */
  build: z.string(),
  /** Its build before, when it had one (an unversioned run had none). */
  from: z.string().nullable(),
  /** The history event it went back to, and the last thing it had done by then. */
  resetToEvent: z.number().int(),
  /** The line as a person reads it. */
  note: z.string(),
});
export type MovedEventData = z.infer<typeof MovedEventData>;

/** `report`: the report is written (its title). */
export const ReportEventData = z.object({ title: z.string() });
export type ReportEventData = z.infer<typeof ReportEventData>;

/** `done`: the run ended; the last event of the stream. */
export const DoneEventData = z.object({
  status: RunStatus.extract(['completed', 'failed', 'cancelled']),
  outcome: Outcome.optional(),
  /** The coordinator's answer, when it answered directly. */
  answer: z.string().optional(),
  error: z.string().optional(),
});
export type DoneEventData = z.infer<typeof DoneEventData>;

/** One event as the activities append it to the run's log (with a key of its own, not shown). */
/**
 * `draft`: text of the report (or of a direct answer) as the model writes it, a piece at a time.
 * A client keeps each part's text and appends `text` at `offset`; `restart` says the part is being
 * written again (a worker stopped mid-answer, or the first draft was not accepted): its text so
 * far is dropped. A draft is not the report: citations are checked and numbered afterwards, and
 * the `report` event says the checked report is stored.
 */
export const DraftEventData = z.object({
  /** `report` (a report in one call), `section-1`, `section-2`… (written section by section), or `answer`. */
  part: z.string(),
  /** The section's heading, for a section. */
  heading: z.string().optional(),
  /** The report version being written (absent for the run's own report). */
  version: z.number().int().optional(),
  /** The activity attempt writing it. */
  attempt: z.number().int(),
  /** Where `text` goes in the part's text so far. */
  offset: z.number().int(),
  text: z.string(),
  restart: z.boolean().optional(),
  /** The writer has finished this text (the model's answer is complete; it is checked next). */
  final: z.boolean().optional(),
  /** Why the part starts again, when it does. */
  reason: z.string().optional(),
});
export type DraftEventData = z.infer<typeof DraftEventData>;

export const RunEventEntry = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), data: StartedEventData }),
  z.object({ type: z.literal('plan'), data: PlanEventData }),
  z.object({ type: z.literal('phase'), data: PhaseEventData }),
  z.object({ type: z.literal('status'), data: StatusEventData }),
  z.object({ type: z.literal('step'), data: StepEventData }),
  z.object({ type: z.literal('search'), data: SearchEventData }),
  z.object({ type: z.literal('crawl'), data: CrawlEventData }),
  z.object({ type: z.literal('tool'), data: ToolEventData }),
  z.object({ type: z.literal('verdict'), data: VerdictEventData }),
  z.object({ type: z.literal('think'), data: ThinkEventData }),
  z.object({ type: z.literal('steer'), data: SteerEventData }),
  z.object({ type: z.literal('moved'), data: MovedEventData }),
  z.object({ type: z.literal('usage'), data: Usage }),
  z.object({ type: z.literal('draft'), data: DraftEventData }),
  z.object({ type: z.literal('report'), data: ReportEventData }),
  z.object({ type: z.literal('done'), data: DoneEventData }),
]);
export type RunEventEntry = z.infer<typeof RunEventEntry>;
export type RunEventType = RunEventEntry['type'];

/** One event as GET /v1/research/:id/events streams it: its number in the log, and when it was logged. */
export const RunEvent = z.intersection(RunEventEntry, z.object({ id: z.number().int(), data: z.object({ at: z.iso.datetime() }) }));
export type RunEvent = z.infer<typeof RunEvent>;
/** The streamed event of one type, e.g. `RunEventOf<'plan'>['data']`. */
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { type: T }>;
