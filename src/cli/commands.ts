// The client commands of `deep-research`: run (live progress, review at the prompt, the report
// written to a file), status, list, approve, revise, answer, cancel, report. They talk to the
// HTTP API (--api / DEEP_RESEARCH_API, --key / DEEP_RESEARCH_KEY); --json prints what it answered.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { apiClient, ApiFailure, type ApiClient, type RunEvent } from './api-client';
import { EVAL_USAGE, EvalError, runEval } from './eval';
import { KB_USAGE, resolveCollection, runKbCommand, runSessionCommand } from './kb';
import { runScheduleCommand, SCHEDULE_USAGE } from './schedules';
import type { Io } from './io';
import type { ResearchView } from '../shared/messages';

export const CLIENT_USAGE = `Client commands (talk to the API: --api URL or DEEP_RESEARCH_API, --key KEY or DEEP_RESEARCH_KEY):
  run "<question>" [--auto-approve] [--option k=v]... [--out FILE]   follow a run live, review at the prompt
      [--session ID|new] [--collection NAME|ID]...   follow up in a session; search your documents
  status <id>                      the run's status, plan and usage
  list [--status S] [--q WORDS] [--limit N]
  approve <id> [--version N]       approve the plan under review
  revise <id> --feedback TEXT [--version N]
  answer <id> "<text>"             answer the clarifying question
  steer <id> --guidance TEXT | --ban DOMAIN... | --read URL... [--collection NAME|ID]... | --wrap-up | --drop STEP | --edit STEP --description TEXT
        | --add STEP --title TEXT --description TEXT [--after STEP]...   steer the running research
  cancel <id>
  report <id> [--format md|json] [--out FILE]
${KB_USAGE}
${SCHEDULE_USAGE}
${EVAL_USAGE}
  Add --json to any of them for machine-readable output.`;

export const CLIENT_COMMANDS = [
  'run',
  'status',
  'list',
  'approve',
  'revise',
  'answer',
  'steer',
  'cancel',
  'report',
  'kb',
  'session',
  'schedule',
  'eval',
];

/** What `GET /v1/research/:id` answers: the one declaration the API and the web page use too. */
type View = ResearchView;

/** Runs one client command; returns the exit code. */
export async function runClientCommand(
  command: string,
  argv: string[],
  defaults: { api: string; key: string | undefined },
  io: Io,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      api: { type: 'string' },
      key: { type: 'string' },
      json: { type: 'boolean' },
      'auto-approve': { type: 'boolean' },
      option: { type: 'string', multiple: true },
      out: { type: 'string' },
      status: { type: 'string' },
      q: { type: 'string' },
      limit: { type: 'string' },
      version: { type: 'string' },
      feedback: { type: 'string' },
      format: { type: 'string' },
      session: { type: 'string' },
      collection: { type: 'string', multiple: true },
      description: { type: 'string' },
      language: { type: 'string' },
      wait: { type: 'boolean' },
      dataset: { type: 'string' },
      concurrency: { type: 'string' },
      resume: { type: 'boolean' },
      'model-name': { type: 'string' },
      guidance: { type: 'string' },
      'wrap-up': { type: 'boolean' },
      ban: { type: 'string', multiple: true },
      read: { type: 'string', multiple: true },
      drop: { type: 'string' },
      edit: { type: 'string' },
      add: { type: 'string' },
      title: { type: 'string' },
      after: { type: 'string', multiple: true },
      every: { type: 'string' },
      cron: { type: 'string' },
      timezone: { type: 'string' },
      paused: { type: 'boolean' },
      note: { type: 'string' },
    },
  });
  const client = apiClient({ api: values.api ?? defaults.api, key: values.key ?? defaults.key });
  const json = (v: unknown) => io.out(`${JSON.stringify(v, null, 2)}\n`);
  const need = (what: string) => {
    throw new UsageError(`${command} needs ${what}`);
  };
  try {
    switch (command) {
      case 'run': {
        const question = positionals.join(' ').trim() || need('a question: deep-research run "<question>"');
        const collections = await Promise.all((values.collection ?? []).map(async (ref) => (await resolveCollection(client, ref)).id));
        let sessionId = values.session;
        if (sessionId === 'new') {
          sessionId = (await client.call<{ id: string }>('POST', '/v1/sessions', { title: question.slice(0, 300) })).id;
          if (!values.json) io.out(`Session ${sessionId} (follow up with --session ${sessionId}).\n`);
        }
        return await follow(client, io, {
          question,
          ...(sessionId ? { sessionId } : {}),
          options: {
            ...parseOptions(values.option ?? []),
            ...(values['auto-approve'] ? { autoAcceptPlan: true } : {}),
            ...(collections.length ? { collections } : {}),
          },
          out: values.out,
          json: values.json ?? false,
        });
      }
      case 'status': {
        const id = positionals[0] ?? need('a run id');
        const v = await client.call<View>('GET', `/v1/research/${encodeURIComponent(id)}`);
        if (values.json) json(v);
        else io.out(describe(v));
        return 0;
      }
      case 'list': {
        const query = new URLSearchParams();
        if (values.status) query.set('status', values.status);
        if (values.q) query.set('q', values.q);
        if (values.limit) query.set('limit', values.limit);
        const list = await client.call<{
          runs: { id: string; status: string; phase?: string; question: string; startedAt?: string }[];
          nextCursor?: string;
        }>('GET', `/v1/research${query.size ? `?${query}` : ''}`);
        if (values.json) json(list);
        else if (!list.runs.length) io.out('no runs\n');
        else
          io.out(
            list.runs
              .map(
                (r) =>
                  `${r.id}  ${r.status.padEnd(15)}  ${(r.phase ?? '').padEnd(12)}  ${(r.startedAt ?? '').slice(0, 16).replace('T', ' ')}  ${short(r.question, 60)}`,
              )
              .join('\n') + '\n',
          );
        return 0;
      }
      case 'approve':
      case 'revise': {
        const id = positionals[0] ?? need('a run id');
        const version = values.version ? Number(values.version) : await currentVersion(client, id);
        const body =
          command === 'approve' ? { planVersion: version } : { planVersion: version, feedback: values.feedback ?? need('--feedback TEXT') };
        const r = await client.call<{ planVersion: number; decision: string; nextPlanVersion?: number }>(
          'POST',
          `/v1/research/${encodeURIComponent(id)}/plan/${command}`,
          body,
        );
        if (values.json) json(r);
        else
          io.out(
            r.decision === 'approved'
              ? `plan v${r.planVersion} approved\n`
              : `plan v${r.planVersion} sent back; v${r.nextPlanVersion} is being made\n`,
          );
        return 0;
      }
      case 'answer': {
        const id = positionals[0] ?? need('a run id');
        const answer = positionals.slice(1).join(' ').trim() || need('the answer: deep-research answer <id> "<text>"');
        const r = await client.call('POST', `/v1/research/${encodeURIComponent(id)}/clarification`, { answer });
        if (values.json) json(r);
        else io.out('answer sent\n');
        return 0;
      }
      case 'steer': {
        const id = positionals[0] ?? need('a run id');
        const body = values.guidance
          ? { kind: 'guidance', text: values.guidance }
          : values.ban?.length
            ? { kind: 'banDomains', domains: values.ban }
            : values.read?.length || values.collection?.length
              ? {
                  kind: 'mustRead',
                  urls: values.read ?? [],
                  collections: await Promise.all((values.collection ?? []).map(async (ref) => (await resolveCollection(client, ref)).id)),
                }
              : values['wrap-up']
                ? { kind: 'wrapUp' }
                : values.drop
                  ? { kind: 'dropStep', stepId: values.drop }
                  : values.edit
                    ? { kind: 'editStep', stepId: values.edit, description: values.description ?? need('--description TEXT') }
                    : values.add
                      ? {
                          kind: 'addStep',
                          step: {
                            id: values.add,
                            title: values.title ?? need('--title TEXT'),
                            description: values.description ?? need('--description TEXT'),
                            dependsOn: values.after ?? [],
                          },
                        }
                      : need('one of --guidance, --ban, --read, --collection, --wrap-up, --drop, --edit, --add');
        const r = await client.call<{ kind: string; planVersion?: number }>('POST', `/v1/research/${encodeURIComponent(id)}/steer`, body);
        if (values.json) json(r);
        else
          io.out(`${r.kind} taken${r.planVersion ? ` (plan v${r.planVersion})` : ''}
`);
        return 0;
      }
      case 'cancel': {
        const id = positionals[0] ?? need('a run id');
        const r = await client.call('POST', `/v1/research/${encodeURIComponent(id)}/cancel`);
        if (values.json) json(r);
        else io.out(`cancelling ${id}\n`);
        return 0;
      }
      case 'report': {
        const id = positionals[0] ?? need('a run id');
        const format = values.format === 'json' || values.json ? 'json' : 'markdown';
        const body = await client.call<unknown>('GET', `/v1/research/${encodeURIComponent(id)}/report?format=${format}`);
        const text = typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`;
        if (values.out) {
          writeFileSync(values.out, text);
          io.out(`${path.resolve(values.out)}\n`);
        } else io.out(text);
        return 0;
      }
      case 'kb':
        return await runKbCommand(client, io, positionals, values);
      case 'session':
        return await runSessionCommand(client, io, positionals, values);
      case 'schedule':
        return await runScheduleCommand(client, io, positionals, values, parseOptions(values.option ?? []));
      case 'eval': {
        const count = (flag: string, v: string | undefined, fallback?: number) => {
          if (v === undefined) return fallback;
          const n = Number(v);
          if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a whole number of at least 1`);
          return n;
        };
        const r = await runEval(client, io, {
          dataset: values.dataset ?? need('--dataset FILE.jsonl'),
          out: values.out ?? `eval-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}`,
          concurrency: count('concurrency', values.concurrency, 2)!,
          limit: count('limit', values.limit),
          resume: values.resume ?? false,
          modelName: values['model-name'] ?? 'deep-research',
          options: parseOptions(values.option ?? []),
        });
        return r.code;
      }
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (err) {
    if (err instanceof EvalError) {
      io.err(`error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      io.err(`${err.message}\n\n${CLIENT_USAGE}\n`);
      return 2;
    }
    if (err instanceof ApiFailure && err.code === 'usage') {
      io.err(`${err.message}\n\n${CLIENT_USAGE}\n`);
      return 2;
    }
    if (err instanceof ApiFailure) {
      io.err(`error: ${err.message}${err.code && err.status ? ` (${err.status} ${err.code})` : ''}\n`);
      return 1;
    }
    throw err;
  }
}

class UsageError extends Error {}

/** `k=v` pairs; values that read as JSON (numbers, booleans) are taken as such. */
function parseOptions(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--option ${p} is not k=v`);
    const raw = p.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // a plain string
    }
    out[p.slice(0, eq)] = value;
  }
  return out;
}

async function currentVersion(client: ApiClient, id: string): Promise<number> {
  const v = await client.call<View>('GET', `/v1/research/${encodeURIComponent(id)}`);
  if (!v.plan) throw new ApiFailure(409, 'not_reviewing', `research run ${id} has no plan yet (phase ${v.phase})`);
  return v.plan.version;
}

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const money = (u: View['usage']) =>
  u ? `${(u.promptTokens + u.completionTokens).toLocaleString('en-US')} tokens · $${u.costUsd.toFixed(4)}` : '';

/** The status as a person reads it. */
function describe(v: View): string {
  const lines = [`${v.id} · ${v.status} · phase ${v.phase}`, `Question: ${v.question}`];
  if (v.clarificationQuestion) lines.push(`Asks: ${v.clarificationQuestion}`);
  if (v.plan) {
    lines.push(`Plan v${v.plan.version}: ${v.plan.title}`);
    for (const s of v.plan.steps)
      lines.push(`  ${s.id.padEnd(8)} ${s.type.padEnd(10)} ${s.status.padEnd(10)} ${s.attempts} attempt(s)  ${short(s.title, 60)}`);
  }
  if (v.usage) lines.push(`Usage: ${money(v.usage)}`);
  for (const w of v.waiting ?? [])
    lines.push(`Waiting: ${w.activity}${w.step ? ` (step ${w.step})` : ''}, attempt ${w.attempt}: ${w.lastError ?? ''}`);
  if (v.answer) lines.push(`Answer: ${v.answer}`);
  if (v.error) lines.push(`Error: ${v.error}`);
  return `${lines.join('\n')}\n`;
}

/** `run`: starts the run and follows its events, asking at the prompt when the run waits. */
async function follow(
  client: ApiClient,
  io: Io,
  o: { question: string; sessionId?: string; options: Record<string, unknown>; out: string | undefined; json: boolean },
): Promise<number> {
  const started = await client.call<{ id: string }>('POST', '/v1/research', {
    question: o.question,
    options: o.options,
    ...(o.sessionId ? { sessionId: o.sessionId } : {}),
  });
  const id = started.id;
  const say = (t: string) => (o.json ? undefined : io.out(`${t}\n`));
  say(`Research ${id} started.`);
  let plan: { version: number; title: string; steps: { id: string; title: string; type: string }[] } | undefined;
  let done: RunEvent | undefined;
  for await (const e of client.events(id)) {
    if (o.json) io.out(`${JSON.stringify(e)}\n`);
    const d = e.data;
    switch (e.type) {
      case 'plan':
        plan = d as unknown as typeof plan;
        say(`Plan v${plan!.version}: ${plan!.title}`);
        plan!.steps.forEach((s, i) => say(`  ${i + 1}. [${s.type}] ${s.id}: ${s.title}`));
        break;
      case 'phase':
        say(`· ${String(d.phase)}`);
        if (d.phase === 'reviewing' && plan) await review(client, io, id, plan.version);
        break;
      case 'status':
        if (d.status === 'awaiting_review' && d.phase === 'coordinating') await clarify(client, io, id);
        break;
      case 'step':
        say(
          `  step ${String(d.id)} ${String(d.status)}${Number(d.attempts) > 1 ? ` (attempt ${String(d.attempts)})` : ''}${d.summary ? `: ${short(String(d.summary), 100)}` : ''}`,
        );
        break;
      case 'search': {
        const qs = (d.queries as { query: string; results: number; error?: string }[]).map(
          (q) => `"${short(q.query, 50)}" (${q.error ? 'failed' : q.results})`,
        );
        say(`    ${String(d.step)} searched ${qs.join(', ')}`);
        break;
      }
      case 'crawl':
        for (const p of d.pages as { url: string; status: string; reason?: string }[]) {
          say(
            `    ${String(d.step)} ${p.status === 'ok' ? 'read' : p.status} ${short(p.url, 80)}${p.reason ? ` (${short(p.reason, 60)})` : ''}`,
          );
        }
        break;
      case 'verdict':
        say(
          `  check of step ${String(d.step)}: ${d.passed ? 'passed' : `sent back${d.feedback ? ` (${short(String(d.feedback), 100)})` : ''}`}`,
        );
        break;
      case 'usage':
        say(`  ${money(d as unknown as View['usage'])}`);
        break;
      case 'done':
        done = e;
        break;
    }
  }
  const end = done?.data ?? {};
  if (end.status !== 'completed') {
    io.err(`Research ${id} ${String(end.status ?? 'ended')}${end.error ? `: ${String(end.error)}` : ''}\n`);
    return 1;
  }
  if (end.outcome === 'answered_directly') {
    say(`Answer: ${String(end.answer ?? '')}`);
    return 0;
  }
  const report = await client.call<string>('GET', `/v1/research/${encodeURIComponent(id)}/report`);
  const file = path.resolve(o.out ?? `report-${id.replace(/^research-/, '').slice(0, 12)}.md`);
  writeFileSync(file, report);
  say(`Report written to ${file}`);
  return 0;
}

/** The plan waits for review: approve, revise with feedback, or cancel, at the prompt. */
async function review(client: ApiClient, io: Io, id: string, version: number): Promise<void> {
  for (;;) {
    const choice = (await io.ask(`Approve plan v${version} (a), revise it (r) or cancel the run (c)? `))?.trim().toLowerCase();
    if (choice === undefined) {
      io.out(`The plan waits for review: deep-research approve ${id}  (or revise ${id} --feedback "...")\n`);
      return;
    }
    try {
      if (choice === 'a' || choice === 'approve') {
        await client.call('POST', `/v1/research/${encodeURIComponent(id)}/plan/approve`, { planVersion: version });
        io.out(`Plan v${version} approved.\n`);
        return;
      }
      if (choice === 'r' || choice === 'revise') {
        const feedback = (await io.ask('Feedback for the planner: '))?.trim();
        if (!feedback) continue;
        await client.call('POST', `/v1/research/${encodeURIComponent(id)}/plan/revise`, { planVersion: version, feedback });
        io.out(`Plan v${version} sent back with your feedback.\n`);
        return;
      }
      if (choice === 'c' || choice === 'cancel') {
        await client.call('POST', `/v1/research/${encodeURIComponent(id)}/cancel`);
        return;
      }
    } catch (err) {
      // Someone else decided first (409): say so and go on following the run.
      if (err instanceof ApiFailure && err.status === 409) {
        io.out(`${err.message}\n`);
        return;
      }
      throw err;
    }
  }
}

/** The coordinator asks a question before researching: answer it at the prompt. */
async function clarify(client: ApiClient, io: Io, id: string): Promise<void> {
  const v = await client.call<View>('GET', `/v1/research/${encodeURIComponent(id)}`);
  if (!v.clarificationQuestion) return;
  const answer = (await io.ask(`${v.clarificationQuestion}\n> `))?.trim();
  if (answer === undefined) {
    io.out(`The run asks: ${v.clarificationQuestion}\nAnswer with: deep-research answer ${id} "<text>"\n`);
    return;
  }
  await client.call('POST', `/v1/research/${encodeURIComponent(id)}/clarification`, { answer }).catch((err: unknown) => {
    if (!(err instanceof ApiFailure && err.status === 409)) throw err;
    io.out(`${err.message}\n`);
  });
}
