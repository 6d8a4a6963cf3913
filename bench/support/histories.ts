// What the runs cost Temporal, read from their histories (each run and its child workflows):
// events and bytes, workflow tasks and activity tasks started, activities by type, and the waits
// between scheduling and starting a task, where the time of a run goes under load.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { mapPool } from './api-client';

export interface HistoryFigures {
  workflows: number;
  events: number;
  bytes: number;
  workflowTasks: number;
  activityTasks: number;
  activities: Map<string, number>;
  /** Events by type (EVENT_TYPE_ prefix dropped), over the runs and their children. */
  eventTypes: Map<string, number>;
  /** Waits and durations in ms, by what they measure. */
  waits: Map<string, number[]>;
  /** Each workflow task's schedule-to-start: when it was scheduled (ms since the epoch) and the wait. */
  workflowTaskWaits: { at: number; ms: number }[];
  /** Failed workflow tasks, by cause and the first line of their failure. */
  workflowTaskFailures: Map<string, number>;
}

const ms = (t: unknown) =>
  t ? Number((t as { seconds?: unknown }).seconds ?? 0) * 1000 + Number((t as { nanos?: number }).nanos ?? 0) / 1e6 : 0;

function eventTypeName(t: unknown): string {
  const name = typeof t === 'string' ? t : (proto.temporal.api.enums.v1.EventType[Number(t)] ?? String(t));
  return name.replace(/^EVENT_TYPE_/, '');
}

export async function readHistories(client: Client, ids: string[], parallel = 8): Promise<HistoryFigures> {
  const f: HistoryFigures = {
    workflows: 0,
    events: 0,
    bytes: 0,
    workflowTasks: 0,
    activityTasks: 0,
    activities: new Map(),
    eventTypes: new Map(),
    waits: new Map(),
    workflowTaskWaits: [],
    workflowTaskFailures: new Map(),
  };
  const addWait = (k: string, v: number) => {
    const xs = f.waits.get(k);
    if (xs) xs.push(v);
    else f.waits.set(k, [v]);
  };
  const one = async (wid: string): Promise<string[]> => {
    const handle = client.workflow.getHandle(wid);
    const desc = await handle.describe();
    f.workflows++;
    f.bytes += Number(desc.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
    const history = await handle.fetchHistory();
    const at = new Map<string, number>();
    const queueOf = new Map<string, string>();
    const children: string[] = [];
    for (const e of history.events ?? []) {
      f.events++;
      const type = eventTypeName(e.eventType);
      f.eventTypes.set(type, (f.eventTypes.get(type) ?? 0) + 1);
      const id = String(e.eventId);
      const t = ms(e.eventTime);
      at.set(id, t);
      const sched = e.activityTaskScheduledEventAttributes;
      if (sched) {
        queueOf.set(id, (sched.taskQueue?.name ?? '').replace(/^[^-]*/, 'main'));
        const type = sched.activityType?.name;
        if (type) f.activities.set(type, (f.activities.get(type) ?? 0) + 1);
      }
      const started = e.activityTaskStartedEventAttributes;
      if (started) {
        f.activityTasks++;
        addWait(
          `activity schedule-to-start (${queueOf.get(String(started.scheduledEventId))})`,
          t - at.get(String(started.scheduledEventId))!,
        );
      }
      const done = e.activityTaskCompletedEventAttributes;
      if (done) addWait('activity run', t - at.get(String(done.startedEventId))!);
      if (e.workflowTaskStartedEventAttributes) {
        f.workflowTasks++;
        const scheduled = at.get(String(Number(e.eventId) - 1))!;
        addWait('workflow task schedule-to-start', t - scheduled);
        f.workflowTaskWaits.push({ at: scheduled, ms: t - scheduled });
      }
      const wftDone = e.workflowTaskCompletedEventAttributes;
      if (wftDone) addWait('workflow task run', t - at.get(String(wftDone.startedEventId))!);
      const wftFailed = e.workflowTaskFailedEventAttributes;
      if (wftFailed) {
        const cause = proto.temporal.api.enums.v1.WorkflowTaskFailedCause[Number(wftFailed.cause)] ?? String(wftFailed.cause);
        const key = `${cause.replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '')}: ${(wftFailed.failure?.message ?? '').split('\n')[0]!.slice(0, 160)}`;
        f.workflowTaskFailures.set(key, (f.workflowTaskFailures.get(key) ?? 0) + 1);
      }
      const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
      if (child) children.push(child);
    }
    return children;
  };
  // Level by level: the runs, then their steps, then anything those started.
  for (let level = ids; level.length;) level = (await mapPool(level, parallel, one)).flat();
  return f;
}
