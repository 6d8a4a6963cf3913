// What one client command of `deep-research` is: its lines in the help, how it reads the command
// line, and what it does. commands.ts lists them in one table; help and dispatch both read it.
import { parseArgs } from 'node:util';
import type { ApiClient } from './api-client';
import type { Io } from './io';

// Every client command accepts every flag and reads the ones it needs, as the CLI did before the
// table: a script that passes a flag one command ignores keeps working.
const FLAGS = {
  help: { type: 'boolean', short: 'h' },
  api: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  'auto-approve': { type: 'boolean' },
  effort: { type: 'string' },
  mode: { type: 'string' },
  models: { type: 'string' },
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
  'step-type': { type: 'string' },
  edits: { type: 'string' },
  after: { type: 'string', multiple: true },
  every: { type: 'string' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  paused: { type: 'boolean' },
  note: { type: 'string' },
  notify: { type: 'string' },
  provider: { type: 'string', multiple: true },
  prefer: { type: 'string', multiple: true },
  avoid: { type: 'string', multiple: true },
  length: { type: 'string' },
  locale: { type: 'string' },
  audience: { type: 'string' },
  instructions: { type: 'string' },
  model: { type: 'string' },
  'no-wait': { type: 'boolean' },
  user: { type: 'string' },
} as const;

/** The command line after the command's name; an unknown flag throws (node:util's message). */
export function parseClientFlags(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, options: FLAGS });
}

export type Flags = ReturnType<typeof parseClientFlags>['values'];

/** A command line the command cannot run with: the message and the help go to stderr, exit 2. */
export class UsageError extends Error {}

/** What a command's `parse` reads. `need` throws the UsageError "<command> needs <what>". */
export interface CommandLine {
  positionals: string[];
  flags: Flags;
  need(what: string): never;
}

/** What a command's `handle` works with. */
export interface CommandContext {
  client: ApiClient;
  io: Io;
  /** --json: print what the API answered. */
  json: boolean;
  printJson(value: unknown): void;
}

/** One entry of the table: `parse` checks the command line before anything is sent to the API. */
export interface CommandSpec<Args> {
  name: string;
  /** Its lines in the help, each indented by two spaces. */
  usage: string;
  parse(line: CommandLine): Args;
  /** Returns the exit code. */
  handle(context: CommandContext, args: Args): Promise<number>;
}

export interface ClientCommand {
  name: string;
  usage: string;
  execute(context: CommandContext, line: CommandLine): Promise<number>;
}

/** The entry with its argument type closed over, so entries of different arguments share one table. */
export function defineCommand<Args>(spec: CommandSpec<Args>): ClientCommand {
  return { name: spec.name, usage: spec.usage, execute: (context, line) => spec.handle(context, spec.parse(line)) };
}

/** `k=v` pairs (--option); values that read as JSON (numbers, booleans) are taken as such. */
export function parseOptions(pairs: string[]): Record<string, unknown> {
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
