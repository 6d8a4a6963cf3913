// `deep-research run`: starts a run and follows its events live (the report's draft printed as the
// model writes it), asking at the prompt when the run waits for a plan review or a clarifying
// answer, and writes the checked report to a file.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiFailure, type ApiClient, type RunEvent } from './api-client';
import type { PlanEditInput } from '../client';
import { money, short } from './format';
import type { Io } from './io';
import { DraftTranscript } from '../shared/draft';
import type { PlanEventData, RunEventOf } from '../shared/events';

/** Printed before the report's draft. */
const DRAFT_NOTE = '· the report, as the model writes it (a draft: its citations are checked next)\n';

export interface FollowOptions {
  question: string;
  sessionId?: string;
  /** Whose memory the run reads and teaches (absent: the key's owner). */
  userId?: string | undefined;
  options: Record<string, unknown>;
  out: string | undefined;
  json: boolean;
}

/** Starts the run and follows it to its end; returns the exit code. */
export async function follow(client: ApiClient, io: Io, o: FollowOptions): Promise<number> {
  const { id } = await client.research.start({
    question: o.question,
    options: o.options,
    ...(o.sessionId ? { sessionId: o.sessionId } : {}),
    ...(o.userId ? { userId: o.userId } : {}),
  });
  const say = (t: string) => (o.json ? undefined : io.out(`${t}\n`));
  say(`Research ${id} started.`);
  const done = await watch(client, io, id, o.json, say);
  return finish(client, io, id, done, o.out, say);
}

/** Prints the run's events as they come and answers its questions; returns its `done` event. */
async function watch(
  client: ApiClient,
  io: Io,
  id: string,
  json: boolean,
  say: (t: string) => void,
): Promise<RunEventOf<'done'> | undefined> {
  let plan: PlanEventData | undefined;
  let done: RunEventOf<'done'> | undefined;
  // The report (or answer) as the model writes it, printed as it comes; the next line starts on a
  // line of its own.
  const draft = new DraftTranscript(DRAFT_NOTE);
  let midLine = false;
  for await (const e of client.events(id)) {
    if (json) io.out(`${JSON.stringify(e)}\n`);
    if (e.type === 'plan') plan = e.data;
    if (e.type === 'draft') {
      const text = json ? '' : draft.take(e.data);
      if (text) {
        io.out(text);
        midLine = !text.endsWith('\n');
      }
      continue;
    }
    const lines = eventLines(e);
    if (midLine && lines.length) {
      io.out('\n');
      midLine = false;
    }
    for (const line of lines) say(line);
    if (e.type === 'phase' && e.data.phase === 'reviewing' && plan) await review(client, io, id, plan.version);
    if (e.type === 'status' && e.data.status === 'awaiting_review' && e.data.phase === 'coordinating') await clarify(client, io, id);
    if (e.type === 'done') done = e;
  }
  if (midLine) io.out('\n');
  return done;
}

/** What a person reads for one event (nothing for the ones that only move the conversation on). */
function eventLines(e: RunEvent): string[] {
  switch (e.type) {
    case 'plan':
      return planLines(e.data);
    case 'phase':
      return [`· ${e.data.phase}`];
    case 'step': {
      const d = e.data;
      return [
        `  step ${d.id} ${d.status}${d.attempts > 1 ? ` (attempt ${d.attempts})` : ''}${d.summary ? `: ${short(d.summary, 100)}` : ''}`,
      ];
    }
    case 'search': {
      const qs = e.data.queries.map((q) => `"${short(q.query, 50)}" (${q.error ? 'failed' : q.results})`);
      return [`    ${e.data.step} searched ${qs.join(', ')}`];
    }
    case 'crawl': {
      const { step, pages } = e.data;
      return pages.map(
        (p) => `    ${step} ${p.status === 'ok' ? 'read' : p.status} ${short(p.url, 80)}${p.reason ? ` (${short(p.reason, 60)})` : ''}`,
      );
    }
    case 'verdict': {
      const d = e.data;
      return [`  check of step ${d.step}: ${d.passed ? 'passed' : `sent back${d.feedback ? ` (${short(d.feedback, 100)})` : ''}`}`];
    }
    case 'think':
      return [
        e.data.wave !== undefined
          ? `  supervisor (after wave ${e.data.wave}): ${short(e.data.thought, 160)}`
          : `  step ${e.data.step} thinks: ${short(e.data.thought, 160)}`,
      ];
    case 'usage':
      return [`  ${money(e.data)}`];
    case 'moved':
      return [`  ${e.data.note}`];
    default:
      return [];
  }
}

/** The run ended: the answer, or the report written to a file; exit 1 when it did not complete. */
async function finish(
  client: ApiClient,
  io: Io,
  id: string,
  done: RunEventOf<'done'> | undefined,
  out: string | undefined,
  say: (t: string) => void,
): Promise<number> {
  const end = done?.data;
  if (end?.status !== 'completed') {
    io.err(`Research ${id} ${end?.status ?? 'ended'}${end?.error ? `: ${end.error}` : ''}\n`);
    return 1;
  }
  if (end.outcome === 'answered_directly') {
    say(`Answer: ${end.answer ?? ''}`);
    return 0;
  }
  const report = await client.research.report(id);
  const file = path.resolve(out ?? `report-${id.replace(/^research-/, '').slice(0, 12)}.md`);
  writeFileSync(file, report);
  say(`Report written to ${file}`);
  return 0;
}

/** The plan waits for review: approve, revise with feedback, edit a step, or cancel, at the prompt. */
async function review(client: ApiClient, io: Io, id: string, version: number): Promise<void> {
  for (;;) {
    const choice = (await io.ask(`Approve plan v${version} (a), revise it (r), edit a step (e) or cancel the run (c)? `))
      ?.trim()
      .toLowerCase();
    if (choice === undefined) {
      io.out(`The plan waits for review: deep-research approve ${id}  (or revise ${id} --feedback "...")\n`);
      return;
    }
    try {
      if (choice === 'a' || choice === 'approve') {
        await client.research.approve(id, version);
        io.out(`Plan v${version} approved.\n`);
        return;
      }
      if (choice === 'r' || choice === 'revise') {
        const feedback = (await io.ask('Feedback for the planner: '))?.trim();
        if (!feedback) continue;
        await client.research.revise(id, version, feedback);
        io.out(`Plan v${version} sent back with your feedback.\n`);
        return;
      }
      if (choice === 'e' || choice === 'edit') {
        const edits = await askStepEdits(io);
        if (!edits.length) continue;
        await client.research.revise(id, version, '', edits);
        io.out(`Plan v${version} sent back with your edits.\n`);
        return;
      }
      if (choice === 'c' || choice === 'cancel') {
        await client.research.cancel(id);
        return;
      }
    } catch (err) {
      // Edits that would not make a plan: say why and ask again.
      if (err instanceof ApiFailure && (err.code === 'invalid_edit' || err.status === 400)) {
        io.out(`Not sent: ${err.message}\n`);
        continue;
      }
      // Someone else decided first (409): say so and go on following the run.
      if (err instanceof ApiFailure && err.status === 409) {
        io.out(`${err.message}\n`);
        return;
      }
      throw err;
    }
  }
}

/** One step's edits at the prompt: its new title and description (Enter keeps them), or its removal. */
async function askStepEdits(io: Io): Promise<PlanEditInput[]> {
  const stepId = (await io.ask('Which step (its id)? '))?.trim();
  if (!stepId) return [];
  if ((await io.ask(`Remove step ${stepId}? (y/N) `))?.trim().toLowerCase() === 'y') return [{ kind: 'remove', stepId }];
  const title = (await io.ask('New title (Enter keeps it): '))?.trim();
  const description = (await io.ask('What it should do (Enter keeps it): '))?.trim();
  return [
    ...(title ? [{ kind: 'setTitle' as const, stepId, title }] : []),
    ...(description ? [{ kind: 'setDescription' as const, stepId, description }] : []),
  ];
}

/** The coordinator asks a question before researching: answer it at the prompt. */
async function clarify(client: ApiClient, io: Io, id: string): Promise<void> {
  const v = await client.research.get(id);
  if (!v.clarificationQuestion) return;
  const answer = (await io.ask(`${v.clarificationQuestion}\n> `))?.trim();
  if (answer === undefined) {
    io.out(`The run asks: ${v.clarificationQuestion}\nAnswer with: deep-research answer ${id} "<text>"\n`);
    return;
  }
  await client.research.answer(id, answer).catch((err: unknown) => {
    if (!(err instanceof ApiFailure && err.status === 409)) throw err;
    io.out(`${err.message}\n`);
  });
}

/** A plan as the reviewer reads it at the prompt: why, each step with what it will do, and the
 *  brief's sources the plan rests on. */
function planLines(plan: PlanEventData): string[] {
  const lines = [`Plan v${plan.version}: ${plan.title}`];
  if (plan.thought) lines.push(`  Why: ${short(plan.thought, 300)}`);
  plan.steps.forEach((s, i) => {
    lines.push(`  ${i + 1}. [${s.type}] ${s.id}: ${s.title}${s.dependsOn.length ? ` (after ${s.dependsOn.join(', ')})` : ''}`);
    if (s.description) lines.push(`     ${short(s.description, 240)}`);
  });
  if (plan.brief?.sources.length) {
    lines.push(`  Background brief: ${short(plan.brief.text, 240)}`);
    for (const src of plan.brief.sources.slice(0, 6)) lines.push(`    [${src.n}] ${short(src.title, 80)} ${src.url}`);
  }
  return lines;
}
