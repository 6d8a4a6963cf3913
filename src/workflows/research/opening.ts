// Phases 1 to 3, from the question to the first plan: the coordinator (small talk answered, a
// clarifying question asked), the knowledge base chosen, the background investigated. A run that
// can ask no clarifying question has the coordinator's classification made in the background
// phase's activity (classifyThenBackground); any other run takes them in turn.
import { coordinate } from './coordinate';
import { classifyThenInvestigate, investigate, type Opening } from './investigate';
import { chooseKnowledge } from './knowledge';
import type { RunState } from './run-state';

export async function open(run: RunState): Promise<Opening> {
  // A run that moved to a newer build past its clarifications (new-build.ts) opened in an earlier
  // execution; one that moved at a clarifying question goes on from that question.
  const wait = run.carried?.wait;
  if (wait && wait.at !== 'clarification') return { kind: 'research', researchQuestion: wait.researchQuestion };
  if (run.options.maxClarifications === 0) {
    // Planning from the start, in the run's first write of its row: the classification is a
    // moment of the activity, the background and the plan the rest.
    run.moveTo('planning');
    // Chosen before the request is classified: for small talk in a session or a tenant with
    // collections, a lookup (and the collection choice's model call) that the answer did not need.
    await chooseKnowledge(run);
    return classifyThenInvestigate(run);
  }
  const coordination = await coordinate(run);
  if (coordination.kind === 'answer') return coordination;
  await chooseKnowledge(run);
  return { kind: 'research', ...(await investigate(run, coordination.topic)) };
}
