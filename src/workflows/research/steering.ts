// Steering a running research (the `steer` update): guidance that every later model call of the
// run receives, a wrap-up (running steps answer with what they have, pending ones are skipped, the
// report is written), and changes to the steps not yet started (add, drop, edit). The validator
// refuses what cannot be done now, with the reason; the handler applies the change, stores the
// guidance before it answers (so the next call reads it), and tells the running steps to wrap up.
import { plural } from '../../shared/plural';
import { getExternalWorkflowHandle, isCancellation } from '@temporalio/workflow';
import type { Steer, SteerAnswer } from '../../shared/messages';
import { checkSteer } from '../../shared/updates';
import { summarize } from '../../shared/plain';
import type { PlanStep } from '../../shared/schemas';
import { knowledgeSignal, wrapUpSignal } from '../messages';
import type { RunState } from './run-state';

/** Applies a validated steering message. */
export async function steer(run: RunState, message: Steer): Promise<SteerAnswer> {
  const checked = checkSteer(message); // the validator passed it; this fills the defaults
  if (!checked.ok) throw new Error(`a steering message the validator refused: ${checked.error}`);
  const m = checked.value;
  const steering = run.steering;
  steering.changed();
  if (m.kind === 'wrapUp') await wrapUp(run);
  else if (m.kind === 'mustRead') await mustRead(run, m.urls, m.collections);
  else change(run, m);
  // Stored before the answer: the next model call reads the guidance and the bans.
  await run.calls.localStore.recordSteering.executeWithOptions({ summary: `store: steer ${m.kind}` }, [
    {
      researchId: run.id,
      seq: steering.version,
      kind: m.kind,
      summary: run.notes.at(-1) ?? m.kind,
      ...(m.kind === 'guidance' ? { guidance: m.text } : {}),
      ...(m.kind === 'banDomains' ? { bannedDomains: [...steering.bannedDomains] } : {}),
    },
  ]);
  run.publish();
  return { kind: m.kind, accepted: true, ...(run.board.version !== undefined ? { planVersion: run.board.version } : {}) };
}

/** The changes made at once, with nothing to wait for. */
function change(run: RunState, m: Exclude<Steer, { kind: 'wrapUp' | 'mustRead' }>): void {
  const steering = run.steering;
  switch (m.kind) {
    case 'guidance':
      steering.addGuidance(m.text);
      run.said.heard('steering', m.text);
      run.note(`Guidance from the user: "${summarize(m.text, 300)}"`);
      break;
    case 'banDomains': {
      steering.ban(m.domains);
      run.note(`The user banned ${m.domains.join(', ')}: no search result, page or source from there is used.`);
      break;
    }
    case 'addStep': {
      const step: PlanStep = m.step;
      steering.addStep(step);
      run.board.extend([step]);
      run.note(`The user added step ${step.id}: ${summarize(step.title, 160)}`);
      break;
    }
    case 'dropStep':
      run.board.skip(m.stepId, 'skipped: dropped by the user');
      run.note(`The user dropped step ${m.stepId}.`);
      break;
    case 'editStep':
      steering.edit(m.stepId, m.description);
      run.note(`The user changed step ${m.stepId}: "${summarize(m.description, 200)}"`);
      break;
  }
}

/**
 * Pending steps are skipped and the running ones told to answer with what they have. Not async:
 * steer awaits the signals' promise itself, so the steering record follows them with no extra turn
 * of the event loop, as when steer sent them itself.
 */
function wrapUp(run: RunState): Promise<void[]> {
  run.steering.wrapUp();
  run.note('The user asked to wrap up: the report is written from what was found so far.');
  run.board.skipPending('skipped: the user asked to wrap up');
  return Promise.all(run.board.steps.filter((s) => s.status === 'running').map((s) => tellToWrapUp(`${run.id}/step/${s.id}`)));
}

/**
 * Pages to read become a step of their own, which reads them before its first turn (so they are
 * read whatever the running steps are doing); collections join the run's knowledge base, and the
 * running researchers search them from their next round.
 */
async function mustRead(run: RunState, urls: string[], collections: string[]): Promise<void> {
  const steering = run.steering;
  const fresh = steering.freshPages(urls);
  const said: string[] = [];
  if (fresh.length) {
    const step: PlanStep = {
      id: `pages-${steering.version}`,
      title: 'Pages the user asked to read',
      description: `Read the pages the user named and report what they say about the question: ${fresh.join(' ')}`,
      type: 'research',
      needSearch: true,
      dependsOn: [],
    };
    steering.addPagesStep(step, fresh);
    run.board.extend([step]);
    said.push(`to read ${plural(fresh.length, 'page')} (step ${step.id})`);
  }
  if (collections.length) {
    const known = run.knowledge?.collectionIds ?? [];
    const sessionId = run.knowledge?.sessionId;
    const knowledge = { tenant: run.tenant, collectionIds: [...new Set([...known, ...collections])], ...(sessionId ? { sessionId } : {}) };
    run.useKnowledge(knowledge);
    const running = run.board.steps.filter((s) => s.status === 'running' && s.type === 'research');
    await Promise.all(running.map((s) => tell(`${run.id}/step/${s.id}`, (h) => h.signal(knowledgeSignal, { knowledge }))));
    said.push(`to search ${collections.length === 1 ? 'collection' : 'collections'} ${collections.join(', ')}`);
  }
  run.note(`The user asked the run ${said.join(' and ')}.`);
}

/** A step that ended meanwhile has nothing to wrap up. */
async function tellToWrapUp(workflowId: string): Promise<void> {
  await tell(workflowId, (h) => h.signal(wrapUpSignal));
}

/** Signals a step's child; one that ended meanwhile needs nothing. */
async function tell(workflowId: string, send: (h: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): Promise<void> {
  try {
    await send(getExternalWorkflowHandle(workflowId));
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}
