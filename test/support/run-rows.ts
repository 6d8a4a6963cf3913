// A run's row as the store reads it back, from the record a write of it was given.
import type { RecordedRun, RunRecord } from '../../src/activities/store/runs';

export const asRow = (r: RunRecord): RecordedRun => ({
  status: r.status,
  phase: r.phase ?? null,
  plan: r.plan ?? null,
  usage: r.usage,
  error: r.error ?? null,
  outcome: r.outcome ?? null,
  answer: r.answer ?? null,
  question: r.question,
  writeSeq: r.seq ?? 0,
  view: null,
});
