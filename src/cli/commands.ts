// The client commands of `deep-research`: run (live progress, review at the prompt, the report
// written to a file), status, list, approve, revise, answer, steer, cancel, report, kb, session,
// schedule, search-prefs, eval. They talk to the HTTP API (--api / DEEP_RESEARCH_API, --key /
// DEEP_RESEARCH_KEY); --json prints what it answered. One table holds them: the help is made from it and the dispatcher
// looks a command up in it, so a command cannot be missing from the help.
import { apiClient, ApiFailure } from './api-client';
import { parseClientFlags, UsageError, type ClientCommand, type CommandContext } from './command-table';
import { EvalError, evalCommand } from './eval';
import { kbCommand, sessionCommand } from './kb';
import {
  answerCommand,
  approveCommand,
  cancelCommand,
  listCommand,
  reportCommand,
  reviseCommand,
  runCommand,
  statusCommand,
  steerCommand,
} from './research';
import { scheduleCommand } from './schedules';
import { mcpCommand } from '../mcp/command';
import { searchPrefsCommand } from './search-prefs';
import { rewriteCommand } from './rewrite';
import { memoryCommand } from './memory';
import type { Io } from './io';

/** In the order of the help. */
const CLIENT_COMMAND_TABLE: readonly ClientCommand[] = [
  runCommand,
  statusCommand,
  listCommand,
  approveCommand,
  reviseCommand,
  answerCommand,
  steerCommand,
  cancelCommand,
  reportCommand,
  rewriteCommand,
  kbCommand,
  sessionCommand,
  scheduleCommand,
  searchPrefsCommand,
  memoryCommand,
  evalCommand,
  mcpCommand,
];

const CLIENT_FLAGS_NOTE = '--api URL or DEEP_RESEARCH_API, --key KEY or DEEP_RESEARCH_KEY';

export const CLIENT_USAGE = [
  `Client commands (talk to the API: ${CLIENT_FLAGS_NOTE}):`,
  ...CLIENT_COMMAND_TABLE.map((c) => c.usage),
  '  Add --json to any of them for machine-readable output.',
].join('\n');

export const CLIENT_COMMANDS: readonly string[] = CLIENT_COMMAND_TABLE.map((c) => c.name);

/** `deep-research <command> --help`: the command's lines of the help; undefined for another command. */
export function clientCommandHelp(name: string): string | undefined {
  const command = CLIENT_COMMAND_TABLE.find((c) => c.name === name);
  return command && `Usage:\n${command.usage}\n  (talks to the API: ${CLIENT_FLAGS_NOTE}; --json for machine-readable output)\n`;
}

/** Runs one client command; returns the exit code. */
export async function runClientCommand(
  name: string,
  argv: string[],
  defaults: { api: string; key: string | undefined },
  io: Io,
): Promise<number> {
  const { positionals, values: flags } = parseClientFlags(argv);
  const command = CLIENT_COMMAND_TABLE.find((c) => c.name === name);
  if (command && flags.help) {
    io.out(clientCommandHelp(name)!);
    return 0;
  }
  const context: CommandContext = {
    client: apiClient({ api: flags.api ?? defaults.api, key: flags.key ?? defaults.key }),
    io,
    json: flags.json ?? false,
    printJson: (v) => io.out(`${JSON.stringify(v, null, 2)}\n`),
  };
  const need = (what: string): never => {
    throw new UsageError(`${name} needs ${what}`);
  };
  try {
    if (!command) throw new UsageError(`unknown command ${name}`);
    return await command.execute(context, { positionals, flags, need });
  } catch (err) {
    return failed(err, io);
  }
}

/** A command that failed: usage errors exit 2 with the help, the API's errors 1; anything else is a bug and propagates. */
function failed(err: unknown, io: Io): number {
  if (err instanceof EvalError) {
    io.err(`error: ${err.message}\n`);
    return 2;
  }
  if (err instanceof UsageError || (err instanceof ApiFailure && err.code === 'usage')) {
    io.err(`${err.message}\n\n${CLIENT_USAGE}\n`);
    return 2;
  }
  if (err instanceof ApiFailure) {
    io.err(`error: ${err.message}${err.code && err.status ? ` (${err.status} ${err.code})` : ''}\n`);
    return 1;
  }
  throw err;
}
