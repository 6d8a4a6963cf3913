// The events a write of the run's row stands for: what changed between the row as it was and as
// it is now (phase, status, a new plan, steps, usage, the end). Keys name the change, so the same
// change written twice (a retried activity, two writes that both see it) is one event.
import type { NewEvent } from './store';
import type { RecordedRun, RunRecord } from './store/runs';

interface PlanLike {
  version?: number;
  title?: string;
  thought?: string;
  brief?: unknown;
  steps?: {
    id: string;
    title?: string;
    description?: string;
    type?: string;
    status?: string;
    attempts?: number;
    summary?: string;
    dependsOn?: string[];
  }[];
}

const asPlan = (p: unknown): PlanLike | undefined => (p && typeof p === 'object' ? (p as PlanLike) : undefined);

export function runEvents(before: RecordedRun | undefined, after: RunRecord): NewEvent[] {
  const events: NewEvent[] = [];
  const plan = asPlan(after.plan);
  const old = asPlan(before?.plan);
  const v = plan?.version ?? 0;
  if (!before) events.push({ key: 'started', type: 'started', data: { question: after.question } });
  if (plan?.version && plan.version !== old?.version) {
    events.push({
      key: `plan:v${plan.version}`,
      type: 'plan',
      data: {
        version: plan.version,
        title: plan.title ?? '',
        ...(plan.thought ? { thought: plan.thought } : {}),
        ...(plan.brief ? { brief: plan.brief } : {}),
        steps: (plan.steps ?? []).map((s) => ({
          id: s.id,
          title: s.title,
          ...(s.description ? { description: s.description } : {}),
          type: s.type,
          dependsOn: s.dependsOn ?? [],
        })),
      },
    });
  }
  // A new plan version put to review in the same workflow task as the last decision (the reviewer's
  // edits need no model call) is a new review all the same: its phase and status are said again.
  const newPlan = Boolean(plan?.version && old?.version && plan.version !== old.version) && after.phase === 'reviewing';
  if (after.phase && (after.phase !== before?.phase || newPlan)) {
    events.push({ key: `phase:${after.phase}:v${v}`, type: 'phase', data: { phase: after.phase, status: after.status, planVersion: v } });
  }
  if ((after.status !== before?.status || newPlan) && after.status !== 'running') {
    // The write's number tells apart two waits of one kind (a second clarifying question).
    events.push({
      key: `status:${after.status}:v${v}:${after.seq ?? 0}`,
      type: 'status',
      data: { status: after.status, phase: after.phase ?? null },
    });
  }
  for (const s of plan?.steps ?? []) {
    const was = old?.version === plan?.version ? old?.steps?.find((x) => x.id === s.id) : undefined;
    if (s.status === 'pending' || (was && was.status === s.status && was.attempts === s.attempts)) continue;
    events.push({
      key: `step:v${v}:${s.id}:${s.attempts ?? 0}:${s.status}`,
      type: 'step',
      data: { id: s.id, title: s.title, status: s.status, attempts: s.attempts ?? 0, ...(s.summary ? { summary: s.summary } : {}) },
    });
  }
  const u = after.usage;
  const ou = before?.usage;
  if (!ou || u.promptTokens !== ou.promptTokens || u.completionTokens !== ou.completionTokens || u.costUsd !== ou.costUsd) {
    if (u.promptTokens + u.completionTokens > 0) {
      events.push({ key: `usage:${u.promptTokens}:${u.completionTokens}`, type: 'usage', data: { ...u } });
    }
  }
  if (after.status === 'completed' || after.status === 'failed' || after.status === 'cancelled') {
    if (after.status === 'completed' && after.outcome === 'report') {
      events.push({ key: 'report', type: 'report', data: { title: after.answer ?? '' } });
    }
    events.push({
      key: 'done',
      type: 'done',
      data: {
        status: after.status,
        ...(after.outcome ? { outcome: after.outcome } : {}),
        ...(after.outcome === 'answered_directly' && after.answer ? { answer: after.answer } : {}),
        ...(after.error ? { error: after.error } : {}),
      },
    });
  }
  return events;
}
