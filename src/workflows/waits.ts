// What a workflow is waiting for: calls a worker is retrying (an outage, a rate limit), as the
// worker reports them (src/activities/waits.ts). A step's workflow shows its own in its current
// details and forwards them to its run, whose current details in the Temporal UI list them all.
import { defineSignal, getExternalWorkflowHandle, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import { CALL_WAIT_SIGNAL } from '../shared/constants';
import type { CallWait, CallWaitDetails, WaitingCall } from '../shared/messages';

/** Sent by workers (never by people): a call is being retried, or a retried call ended. */
export const callWaitSignal = defineSignal<[CallWait]>(CALL_WAIT_SIGNAL);

type Wait = CallWaitDetails & { step?: string };

export class Waits {
  private readonly calls = new Map<string, Wait>();

  record(m: CallWait): void {
    const key = m.step ? `${m.step}/${m.key}` : m.key;
    if (m.wait) this.calls.set(key, { ...m.wait, ...(m.step ? { step: m.step } : {}) });
    else this.calls.delete(key);
  }

  /** A step's calls end with the step, however it ended. */
  clearStep(step: string): void {
    for (const [key, w] of this.calls) if (w.step === step) this.calls.delete(key);
  }

  /** The calls as the status view lists them (the API refines them with Temporal's word). */
  view(): WaitingCall[] {
    return [...this.calls.values()].map((w) => ({
      ...(w.step ? { step: w.step } : {}),
      activity: w.activity,
      attempt: w.attempt,
      lastError: w.error,
    }));
  }

  /** "Waiting for the LLM (researcherTurn, step a): connection refused; attempt 9 failed, since 04:10 UTC". */
  lines(): string[] {
    return [...this.calls.values()].map(
      (w) =>
        `Waiting for ${w.dependency} (${w.activity}${w.step ? `, step ${w.step}` : ''}): ${w.error}; ` +
        `attempt ${w.attempt} failed, retrying since ${new Date(w.since).toISOString().slice(11, 19)} UTC`,
    );
  }
}

/** In a step's workflow: its current details say what it waits for, and its run is told. */
export function watchStepWaits(step: string, title: string): void {
  const waits = new Waits();
  const parent = workflowInfo().parent;
  const show = () => setCurrentDetails([`Step ${step}: ${title}`, ...waits.lines()].join('\n\n'));
  show();
  setHandler(callWaitSignal, (m) => {
    waits.record(m);
    show();
    if (parent) {
      // The run may have ended meanwhile; nothing depends on it hearing this.
      getExternalWorkflowHandle(parent.workflowId, parent.runId)
        .signal(callWaitSignal, { ...m, step })
        .catch(() => undefined);
    }
  });
}
