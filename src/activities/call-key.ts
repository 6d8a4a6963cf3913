// The identity of an outside call made by an activity: stable across the activity's attempts,
// unique in the history. Rows keyed by it (llm_calls, sandbox_runs) let a retried activity reuse
// what an earlier attempt finished instead of paying for it again.
import { Context } from '@temporalio/activity';

/** `<workflow run id>/<activity id>`, plus `/<suffix>` when one activity makes several calls. */
export function activityCallKey(suffix?: string): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.runId ?? 'standalone'}/${info.activityId}${suffix ? `/${suffix}` : ''}`;
}
