// `deep-research schedule`: recurring research through the HTTP API (Temporal Schedules).
import { ApiFailure, type ApiClient } from './api-client';
import { defineCommand, parseOptions } from './command-table';
import type { Io } from './io';
import type { ScheduleList, ScheduleView } from '../api/contract';
import { NotifyWhen } from '../shared/changes';
import { plural } from '../shared/plural';

export const scheduleCommand = defineCommand({
  name: 'schedule',
  usage: `  schedule create "<question>" --every 24h | --cron "0 6 * * 1" [--timezone Europe/Berlin]
        [--option k=v]... [--session ID] [--paused] [--note TEXT] [--notify always|on_change]
        research that repeats; each report says what changed; with --notify on_change the runs' webhook
        (--option 'webhook={"url":"…"}') gets report_ready only when a report found a new source or a changed figure
  schedule list | show <id> | pause <id> [--note TEXT] | resume <id> | trigger <id> | delete <id>`,
  parse: ({ positionals, flags }) => ({ args: positionals, flags, options: parseOptions(flags.option ?? []) }),
  handle: ({ client, io }, { args, flags, options }) => runScheduleCommand(client, io, args, flags, options),
});

/** A schedule as the list shows it, or as one schedule's answer shows it (all of ScheduleView). */
type Schedule = ScheduleList['schedules'][number] & Partial<ScheduleView>;

export interface ScheduleFlags {
  json?: boolean | undefined;
  every?: string | undefined;
  cron?: string | undefined;
  timezone?: string | undefined;
  paused?: boolean | undefined;
  note?: string | undefined;
  session?: string | undefined;
  notify?: string | undefined;
}

const when = (s: Pick<ScheduleView, 'cron' | 'every' | 'timezone'>) =>
  s.cron ? `cron "${s.cron}"${s.timezone ? ` (${s.timezone})` : ''}` : `every ${s.every ?? '?'}`;

function describe(s: Schedule): string {
  const lines = [
    `${s.id}  ${s.paused ? 'paused' : 'active'}  ${when(s)}`,
    `  ${s.question}`,
    ...(s.note ? [`  note: ${s.note}`] : []),
    ...(s.notify === 'on_change' ? ['  webhook: report_ready only when something changed'] : []),
    ...(s.runsStarted !== undefined ? [`  runs started ${s.runsStarted}, skipped while one was running ${s.runsSkipped ?? 0}`] : []),
    ...(s.nextRunsAt.length ? [`  next: ${s.nextRunsAt.slice(0, 3).join(', ')}`] : []),
    ...(s.running?.length ? [`  running: ${s.running.join(', ')}`] : []),
    ...(s.recentRuns ?? []).slice(0, 5).map((r) => `  ran ${r.startedAt ?? ''}  ${r.id}${changed(r)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** What a run's report found changed since the one before, in a few words ("" when it has no comparison). */
function changed(r: ScheduleView['recentRuns'][number]): string {
  const c = r.changes;
  if (!c) return '';
  const what = [
    c.newSourceCount ? plural(c.newSourceCount, 'new source') : '',
    c.changedClaimCount ? plural(c.changedClaimCount, 'changed claim') : '',
  ].filter(Boolean);
  return `  ${what.length ? `changed: ${what.join(', ')}` : 'no change'}${c.claimsCompared ? '' : ' (claims not compared)'}`;
}

export async function runScheduleCommand(
  client: ApiClient,
  io: Io,
  args: string[],
  values: ScheduleFlags,
  options: Record<string, unknown>,
): Promise<number> {
  const [sub, ...rest] = args;
  const print = (s: ScheduleView) => io.out(values.json ? `${JSON.stringify(s, null, 2)}\n` : describe(s));
  const idOf = (id: string | undefined) => {
    if (!id) throw new ApiFailure(0, 'usage', `schedule ${sub} needs a schedule id`);
    return id;
  };
  switch (sub) {
    case 'create': {
      const question = rest.join(' ').trim();
      if (!question) throw new ApiFailure(0, 'usage', 'schedule create needs a question');
      if (values.notify !== undefined && !NotifyWhen.safeParse(values.notify).success)
        throw new ApiFailure(0, 'usage', '--notify must be always or on_change');
      const body = {
        question,
        ...(values.every ? { every: values.every } : {}),
        ...(values.cron ? { cron: values.cron } : {}),
        ...(values.timezone ? { timezone: values.timezone } : {}),
        ...(values.paused ? { paused: true } : {}),
        ...(values.note ? { note: values.note } : {}),
        ...(values.notify ? { notify: NotifyWhen.parse(values.notify) } : {}),
        ...(values.session ? { sessionId: values.session } : {}),
        ...(Object.keys(options).length ? { options } : {}),
      };
      print(await client.schedules.create(body));
      return 0;
    }
    case 'list': {
      const l = await client.schedules.list();
      if (values.json) io.out(`${JSON.stringify(l, null, 2)}\n`);
      else io.out(l.schedules.map(describe).join('') || 'no schedules\n');
      return 0;
    }
    case 'show':
      print(await client.schedules.get(idOf(rest[0])));
      return 0;
    case 'pause':
    case 'resume':
      print(await client.schedules[sub](idOf(rest[0]), values.note));
      return 0;
    case 'trigger':
      print(await client.schedules.trigger(idOf(rest[0])));
      return 0;
    case 'delete':
      await client.schedules.delete(idOf(rest[0]));
      io.out(values.json ? `${JSON.stringify({ id: rest[0], deleted: true })}\n` : `deleted ${rest[0]}\n`);
      return 0;
    default:
      throw new ApiFailure(0, 'usage', 'schedule commands: create, list, show, pause, resume, trigger, delete');
  }
}
