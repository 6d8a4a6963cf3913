// The knowledge base in a run: the session's memory (earlier questions and reports) and the
// collections it searches, named in the options or picked by the knowledge-base decision from
// the tenant's collections.
import { plural } from '../../shared/plural';
import { isCancellation } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { RunState } from './run-state';

export async function chooseKnowledge(run: RunState): Promise<void> {
  const sessionId = run.sessionId;
  if (sessionId) {
    const memory = await run.calls.knowledge.loadSessionMemory.executeWithOptions({ summary: 'session memory' }, [
      { researchId: run.id, sessionId, ...(run.scheduleId ? { join: run.userQuestion } : {}) },
    ]);
    if (memory.turns) run.note(`Follow-up in a session: the run saw ${plural(memory.turns, 'earlier question')} and their reports.`);
  }
  let collectionIds = run.options.collections;
  if (collectionIds === undefined) {
    const usable = await run.calls.localKnowledge.listUsableCollections.executeWithOptions({ summary: 'knowledge base: collections' }, [
      { tenant: run.tenant },
    ]);
    collectionIds = [];
    if (usable.length) {
      const choice = await run.calls.llm.chooseCollections.executeWithOptions(
        { summary: `knowledge base: choose among ${usable.length} collections` },
        [{ researchId: run.id, question: run.userQuestion, collections: usable }],
      );
      run.addUsage(choice.usage);
      collectionIds = choice.collectionIds;
      const names = usable.filter((c) => collectionIds!.includes(c.collectionId)).map((c) => `"${c.name}"`);
      run.note(
        names.length
          ? `Knowledge base: searched ${names.join(', ')} (${summarize(choice.reason, 160)}).`
          : `Knowledge base: no collection fits the question (${summarize(choice.reason, 160)}).`,
      );
    }
  }
  if (collectionIds.length || sessionId) {
    run.useKnowledge({ tenant: run.tenant, collectionIds, ...(sessionId ? { sessionId } : {}) });
  }
}

/** After the report: a session's report becomes searchable memory for its later runs. */
export async function rememberReport(run: RunState): Promise<void> {
  const sessionId = run.sessionId;
  if (!sessionId) return;
  try {
    await run.calls.embedding.indexSessionReport.executeWithOptions({ summary: 'session memory: index the report' }, [
      { researchId: run.id, sessionId, tenant: run.tenant },
    ]);
  } catch (err) {
    // The report exists; only its retrieval by later runs is missing (they still see it in the window).
    if (isCancellation(err)) throw err;
    run.note(`The report could not be indexed for the session's later questions: ${summarize(failureMessage(err), 200)}`);
  }
}
