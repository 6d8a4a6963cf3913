// Phase 1, the coordinator: small talk is answered directly and the run ends; otherwise the
// locale is settled and, with maxClarifications > 0, an ambiguous question gets one clarifying
// question per round, answered by the answerClarification signal (or not, by reviewTimeout).
import { durationToMs } from '../../shared/plain';
import { waitOrMove } from './new-build';
import type { RunState } from './run-state';

export type Coordination = { kind: 'answer'; answer: string } | { kind: 'research'; topic: string };

export async function coordinate(run: RunState): Promise<Coordination> {
  const opts = run.options;
  const clarifications: string[] = [];
  let round = 0;
  const wait = run.carried?.wait;
  if (wait?.at === 'clarification') {
    // The run moved to a newer build while its question waited: the answer, then the next round.
    clarifications.push(...wait.clarifications);
    hearAnswer(run, clarifications, wait.question, wait.answer ?? (await askClarification(run, wait.question, wait)));
    round = wait.round + 1;
  }
  for (; ; round++) {
    const { decision, usage } = await run.calls.llm.classifyRequest.executeWithOptions(
      { summary: 'coordinator: classify the request, detect its locale' },
      [
        {
          researchId: run.id,
          question: run.userQuestion,
          allowClarification: round < opts.maxClarifications,
          clarifications: clarifications.join('\n'),
          ...(opts.locale ? { locale: opts.locale } : {}),
          ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}),
        },
      ],
    );
    run.addUsage(usage);
    run.setLocale(opts.locale ?? decision.locale);
    if (decision.action === 'answer_directly') return { kind: 'answer', answer: decision.directAnswer ?? '' };
    const topic = decision.researchTopic ?? run.userQuestion;
    if (!decision.clarificationQuestion || round >= opts.maxClarifications) return { kind: 'research', topic };
    const asked = { round, question: decision.clarificationQuestion, clarifications };
    hearAnswer(run, clarifications, asked.question, await askClarification(run, asked.question, asked));
  }
}

function hearAnswer(run: RunState, clarifications: string[], question: string, answer: string | undefined): void {
  if (answer !== undefined) run.said.heard('clarification', answer);
  clarifications.push(`Q: ${question}\nA: ${answer ?? '(no answer; proceed with your best interpretation)'}`);
}

/** Waits for the user's answer, at most reviewTimeout (from when it was first asked: `asked.endsAt`
 *  of an earlier execution); undefined when none came. */
async function askClarification(
  run: RunState,
  clarifyingQuestion: string,
  asked: { round: number; clarifications: string[]; endsAt?: number },
): Promise<string | undefined> {
  run.inbox.ask(clarifyingQuestion);
  run.moveTo('coordinating', 'awaiting_review');
  const endsAt = asked.endsAt ?? Date.now() + durationToMs(run.options.reviewTimeout);
  const answered = await waitOrMove(
    run,
    () => run.inbox.clarificationAnswer !== undefined,
    endsAt,
    () => ({
      at: 'clarification',
      round: asked.round,
      question: clarifyingQuestion,
      clarifications: [...asked.clarifications],
      endsAt,
      ...(run.inbox.clarificationAnswer !== undefined ? { answer: run.inbox.clarificationAnswer } : {}),
    }),
  );
  const answer = answered ? run.inbox.clarificationAnswer : undefined;
  run.inbox.closeQuestion();
  run.moveTo('coordinating');
  return answer;
}
