// The client commands on research runs: run, status, list, approve, revise, answer, steer, cancel,
// report. Each entry holds its help lines, how it reads the command line and what it does.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiFailure, type ApiClient } from './api-client';
import { defineCommand, parseOptions, UsageError, type CommandContext, type CommandLine, type Flags } from './command-table';
import { follow } from './follow';
import { money, short } from './format';
import { resolveCollection } from './kb';
import type { ListedRun } from '../api/contract';
import type { ListRunsQuery, PlanEditInput } from '../client';
import { Effort, ResearchMode, type RunModels } from '../shared/schemas';
import { LLM_ROLES } from '../shared/constants';
import type { ResearchView, SteerInput } from '../shared/messages';
import { plural } from '../shared/plural';

const runId = ({ positionals, need }: CommandLine) => positionals[0] ?? need('a run id');
const collectionIds = (client: ApiClient, refs: string[]) =>
  Promise.all(refs.map(async (ref) => (await resolveCollection(client, ref)).id));

export const runCommand = defineCommand({
  name: 'run',
  usage: `  run "<question>" [--auto-approve] [--option k=v]... [--out FILE]   follow a run live, review at the prompt
      [--effort quick|standard|deep]   how much the run searches, plans and writes (a preset; --option overrides its parts)
      [--mode plan|supervisor]         after the plan's steps: follow-up steps for gaps, or a supervisor's waves (deep's default)
      [--models ROLE=MODEL,...]        the run's model for a role (researcher, reporter, ...): one the server allows
      [--session ID|new] [--collection NAME|ID]...   follow up in a session; search your documents
      [--user ID]                      whose memory the run reads and teaches (default: your key's; --option memory=false: none)`,
  parse: ({ positionals, flags, need }) => ({
    question: positionals.join(' ').trim() || need('a question: deep-research run "<question>"'),
    session: flags.session,
    user: flags.user,
    collections: flags.collection ?? [],
    options: {
      ...effortOption(flags.effort),
      ...modeOption(flags.mode),
      ...modelsOption(flags.models),
      ...parseOptions(flags.option ?? []),
      ...(flags['auto-approve'] ? { autoAcceptPlan: true } : {}),
    },
    out: flags.out,
  }),
  async handle({ client, io, json }, a) {
    const collections = await collectionIds(client, a.collections);
    let sessionId = a.session;
    if (sessionId === 'new') {
      sessionId = (await client.sessions.create(a.question.slice(0, 300))).id;
      if (!json) io.out(`Session ${sessionId} (follow up with --session ${sessionId}).\n`);
    }
    return follow(client, io, {
      question: a.question,
      ...(sessionId ? { sessionId } : {}),
      userId: a.user,
      options: { ...a.options, ...(collections.length ? { collections } : {}) },
      out: a.out,
      json,
    });
  },
});

/** --effort: one of the presets, checked before anything is sent. */
function effortOption(effort: string | undefined): { effort?: Effort } {
  if (effort === undefined) return {};
  const parsed = Effort.safeParse(effort);
  if (!parsed.success) throw new UsageError(`--effort must be ${Effort.options.join(', ')}, not "${effort}"`);
  return { effort: parsed.data };
}

/** --mode: how the run goes on after the plan's steps, checked before anything is sent. */
function modeOption(mode: string | undefined): { researchMode?: ResearchMode } {
  if (mode === undefined) return {};
  const parsed = ResearchMode.safeParse(mode);
  if (!parsed.success) throw new UsageError(`--mode must be ${ResearchMode.options.join(' or ')}, not "${mode}"`);
  return { researchMode: parsed.data };
}

/** --models role=model,...: each role one of the roles, checked before anything is sent (the
 *  server checks the models). */
function modelsOption(models: string | undefined): { models?: RunModels } {
  if (models === undefined) return {};
  const out: Record<string, string> = {};
  for (const pair of models
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    const role = pair.slice(0, Math.max(eq, 0)).trim();
    if (eq < 1 || !(LLM_ROLES as readonly string[]).includes(role) || !pair.slice(eq + 1).trim())
      throw new UsageError(`--models takes role=model pairs, a role being one of ${LLM_ROLES.join(', ')}; not "${pair}"`);
    out[role] = pair.slice(eq + 1).trim();
  }
  return { models: out as RunModels };
}

export const statusCommand = defineCommand({
  name: 'status',
  usage: `  status <id>                      the run's status, plan and usage`,
  parse: (line) => ({ id: runId(line) }),
  async handle({ client, io, json, printJson }, { id }) {
    const v = await client.research.get(id);
    if (json) printJson(v);
    else io.out(describeStatus(v));
    return 0;
  },
});

/** The status as a person reads it. */
export function describeStatus(v: ResearchView): string {
  const lines = [`${v.id} · ${v.status} · phase ${v.phase}`, `Question: ${v.question}`];
  if (v.clarificationQuestion) lines.push(`Asks: ${v.clarificationQuestion}`);
  if (v.plan) {
    lines.push(`Plan v${v.plan.version}: ${v.plan.title}`);
    for (const s of v.plan.steps)
      lines.push(`  ${s.id.padEnd(8)} ${s.type.padEnd(10)} ${s.status.padEnd(10)} ${plural(s.attempts, 'attempt')}  ${short(s.title, 60)}`);
  }
  if (v.usage) lines.push(`Usage: ${money(v.usage)}`);
  for (const w of v.waiting ?? [])
    lines.push(`Waiting: ${w.activity}${w.step ? ` (step ${w.step})` : ''}, attempt ${w.attempt}: ${w.lastError ?? ''}`);
  if (v.answer) lines.push(`Answer: ${v.answer}`);
  // A cancelled run's "error" is only why it ended: said as such, not as an error.
  if (v.error) lines.push(v.status === 'cancelled' ? `Ended: ${v.error}` : `Error: ${v.error}`);
  return `${lines.join('\n')}\n`;
}

export const listCommand = defineCommand({
  name: 'list',
  usage: `  list [--status S] [--q WORDS] [--limit N]`,
  parse: ({ flags }) => {
    // The API checks the values and says what is wrong with one.
    const query = { status: flags.status, q: flags.q, limit: flags.limit } as ListRunsQuery;
    return { query };
  },
  async handle({ client, io, json, printJson }, { query }) {
    const list = await client.research.list(query);
    if (json) printJson(list);
    else if (!list.runs.length) io.out('no runs\n');
    else io.out(list.runs.map(listLine).join('\n') + '\n');
    return 0;
  },
});

const listLine = (r: ListedRun) =>
  `${r.id}  ${r.status.padEnd(15)}  ${(r.phase ?? '').padEnd(12)}  ${(r.startedAt ?? '').slice(0, 16).replace('T', ' ')}  ${short(r.question, 60)}`;

/** approve and revise: the plan version (--version, else the one under review) and the decision. */
interface PlanDecision {
  id: string;
  version: number | undefined;
  feedback?: string;
  edits?: PlanEditInput[];
}

const planVersion = (flags: Flags) => (flags.version ? Number(flags.version) : undefined);

export const approveCommand = defineCommand({
  name: 'approve',
  usage: `  approve <id> [--version N]       approve the plan under review`,
  parse: (line): PlanDecision => ({ id: runId(line), version: planVersion(line.flags) }),
  handle: (context, d) => decidePlan(context, 'approve', d),
});

export const reviseCommand = defineCommand({
  name: 'revise',
  usage: [
    `  revise <id> [--feedback TEXT] [--version N]    send the plan back: feedback for the planner, and/or edits of its steps:`,
    `        [--edit STEP [--title T] [--description D] [--step-type research|processing] [--after STEP ...|--after none]]`,
    `        [--drop STEP] [--add STEP --title T --description D [--step-type T] [--after STEP ...]] [--edits JSON]`,
  ].join('\n'),
  parse: (line): PlanDecision => {
    const edits = planEdits(line.flags);
    const feedback = line.flags.feedback ?? '';
    if (!feedback.trim() && !edits.length) line.need('--feedback TEXT or an edit of a step (--edit, --drop, --add, --edits)');
    return { id: runId(line), version: planVersion(line.flags), feedback, edits };
  },
  handle: (context, d) => decidePlan(context, 'revise', d),
});

/** The step edits a revise command line asks for, in the API's shape (the API checks them). */
function planEdits(flags: Flags): PlanEditInput[] {
  const edits: PlanEditInput[] = [];
  const type = flags['step-type'];
  if (type !== undefined && type !== 'research' && type !== 'processing')
    throw new UsageError('--step-type must be research or processing');
  const after = flags.after?.includes('none') ? [] : flags.after;
  if (flags.edit && flags.add) throw new UsageError('--edit and --add go in separate revisions (or use --edits JSON)');
  if (flags.drop) edits.push({ kind: 'remove', stepId: flags.drop });
  if (flags.edit) {
    const stepId = flags.edit;
    if (flags.title !== undefined) edits.push({ kind: 'setTitle', stepId, title: flags.title });
    if (flags.description !== undefined) edits.push({ kind: 'setDescription', stepId, description: flags.description });
    if (type) edits.push({ kind: 'setType', stepId, type });
    if (after) edits.push({ kind: 'setDependencies', stepId, dependsOn: after });
    if (edits.length === (flags.drop ? 1 : 0)) throw new UsageError('--edit STEP needs --title, --description, --step-type or --after');
  }
  if (flags.add) {
    if (!flags.title || !flags.description) throw new UsageError('--add STEP needs --title and --description');
    edits.push({
      kind: 'add',
      step: { id: flags.add, title: flags.title, description: flags.description, ...(type ? { type } : {}), dependsOn: after ?? [] },
    });
  }
  if (flags.edits) {
    let more: unknown;
    try {
      more = JSON.parse(flags.edits);
    } catch {
      throw new UsageError('--edits must be a JSON array of edits');
    }
    if (!Array.isArray(more)) throw new UsageError('--edits must be a JSON array of edits');
    edits.push(...(more as PlanEditInput[]));
  }
  return edits;
}

async function decidePlan({ client, io, json, printJson }: CommandContext, decision: 'approve' | 'revise', d: PlanDecision) {
  const version = d.version ?? (await currentVersion(client, d.id));
  const r =
    decision === 'approve'
      ? await client.research.approve(d.id, version)
      : await client.research.revise(d.id, version, d.feedback ?? '', d.edits ?? []);
  if (json) printJson(r);
  else
    io.out(
      r.decision === 'approved'
        ? `plan v${r.planVersion} approved\n`
        : `plan v${r.planVersion} sent back; v${r.nextPlanVersion} is being made\n`,
    );
  return 0;
}

/** The version of the plan under review, for approve and revise without --version. */
async function currentVersion(client: ApiClient, id: string): Promise<number> {
  const v = await client.research.get(id);
  if (!v.plan) throw new ApiFailure(409, 'not_reviewing', `research run ${id} has no plan yet (phase ${v.phase})`);
  return v.plan.version;
}

export const answerCommand = defineCommand({
  name: 'answer',
  usage: `  answer <id> "<text>"             answer the clarifying question`,
  parse: (line) => ({
    id: runId(line),
    answer: line.positionals.slice(1).join(' ').trim() || line.need('the answer: deep-research answer <id> "<text>"'),
  }),
  async handle({ client, io, json, printJson }, { id, answer }) {
    const r = await client.research.answer(id, answer);
    if (json) printJson(r);
    else io.out('answer sent\n');
    return 0;
  },
});

export const steerCommand = defineCommand({
  name: 'steer',
  usage: `  steer <id> --guidance TEXT | --ban DOMAIN... | --read URL... [--collection NAME|ID]... | --wrap-up | --drop STEP | --edit STEP --description TEXT
        | --add STEP --title TEXT --description TEXT [--after STEP]...   steer the running research`,
  parse: (line) => ({ id: runId(line), steer: steering(line) }),
  async handle({ client, io, json, printJson }, { id, steer }) {
    // --collection names a collection by name or id; the run takes ids.
    const body = steer.kind === 'mustRead' ? { ...steer, collections: await collectionIds(client, steer.collections) } : steer;
    const r = await client.research.steer(id, body);
    if (json) printJson(r);
    else io.out(`${r.kind} taken${r.planVersion ? ` (plan v${r.planVersion})` : ''}\n`);
    return 0;
  },
});

/** What steer sends, collections still as the user named them. */
type Steering = Exclude<SteerInput, { kind: 'mustRead' }> | { kind: 'mustRead'; urls: string[]; collections: string[] };

/** The one change steer sends: the first of its flags given, in the order of the help. */
function steering({ flags: f, need }: CommandLine): Steering {
  if (f.guidance) return { kind: 'guidance', text: f.guidance };
  if (f.ban?.length) return { kind: 'banDomains', domains: f.ban };
  if (f.read?.length || f.collection?.length) return { kind: 'mustRead', urls: f.read ?? [], collections: f.collection ?? [] };
  if (f['wrap-up']) return { kind: 'wrapUp' };
  if (f.drop) return { kind: 'dropStep', stepId: f.drop };
  if (f.edit) return { kind: 'editStep', stepId: f.edit, description: f.description ?? need('--description TEXT') };
  if (f.add) {
    const title = f.title ?? need('--title TEXT');
    const description = f.description ?? need('--description TEXT');
    return { kind: 'addStep', step: { id: f.add, title, description, dependsOn: f.after ?? [] } };
  }
  return need('one of --guidance, --ban, --read, --collection, --wrap-up, --drop, --edit, --add');
}

export const cancelCommand = defineCommand({
  name: 'cancel',
  usage: `  cancel <id>`,
  parse: (line) => ({ id: runId(line) }),
  async handle({ client, io, json, printJson }, { id }) {
    const r = await client.research.cancel(id);
    if (json) printJson(r);
    else io.out(`cancelling ${id}\n`);
    return 0;
  },
});

const REPORT_FORMATS = ['md', 'markdown', 'json', 'html', 'pdf', 'docx', 'pptx'] as const;
type CliReportFormat = (typeof REPORT_FORMATS)[number];

export const reportCommand = defineCommand({
  name: 'report',
  usage: `  report <id> [--format md|json|html|pdf|docx|pptx] [--out FILE] [--version N]   PDF, Word and slides go to a file (report-<id>.pdf/.docx/.pptx without --out); --version: a rewrite (default 1, the run's own)`,
  parse: (line) => {
    const format = line.flags.format ?? (line.flags.json ? 'json' : 'md');
    if (!(REPORT_FORMATS as readonly string[]).includes(format))
      throw new UsageError(`--format must be ${REPORT_FORMATS.filter((f) => f !== 'markdown').join(', ')}, not "${format}"`);
    return { id: runId(line), format: format as CliReportFormat, out: line.flags.out, version: reportVersion(line.flags.version) };
  },
  async handle({ client, io }, { id, format, out, version }) {
    if (format === 'pdf' || format === 'docx' || format === 'pptx') {
      // A binary file never goes to the terminal.
      const file = path.resolve(out ?? `report-${id.replace(/^research-/, '').slice(0, 12)}.${format}`);
      writeFileSync(file, Buffer.from(await (await client.research.reportFile(id, format, version)).arrayBuffer()));
      io.out(`${file}\n`);
      return 0;
    }
    const text =
      format === 'json'
        ? `${JSON.stringify(await client.research.reportJson(id, version), null, 2)}\n`
        : await client.research.report(id, format, version);
    if (out) {
      writeFileSync(out, text);
      io.out(`${path.resolve(out)}\n`);
    } else io.out(text);
    return 0;
  },
});

/** --version of report: a positive whole number, checked before anything is sent. */
function reportVersion(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d{0,6}$/.test(v)) throw new UsageError(`--version must be a report version (1, 2, ...), not "${v}"`);
  return Number(v);
}
