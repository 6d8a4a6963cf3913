// `deep-research` command line: the help, and each command loaded when it runs (dev, worker and
// api from src/serve.ts, keys from cli/keys.ts, the client commands from cli/commands.ts), so that
// --help and the client commands never load the worker, the API server and the bundler.
import readline from 'node:readline/promises';
import { parseArgs } from 'node:util';
import type { Config } from './config';
import { ConfigError } from './shared/errors';
import { KEYS_USAGE } from './cli/keys-usage';
import { CLIENT_COMMANDS, CLIENT_USAGE, clientCommandHelp, runClientCommand } from './cli/commands';
import type { Io } from './cli/io';

/** stdout, stderr, and questions at the terminal (none when stdin is not one); one reader for all. */
function terminalIo(): Io & { close(): void } {
  let rl: readline.Interface | undefined;
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    ask: async (prompt) => {
      if (!process.stdin.isTTY) return undefined;
      rl ??= readline.createInterface({ input: process.stdin, output: process.stdout });
      return rl.question(prompt);
    },
    close: () => rl?.close(),
  };
}

const CONFIGURATION_NOTE = 'Configuration comes from the environment; see docs/configuration.md.';

/** The commands that run part of the service, or manage it, rather than talk to its API. */
interface ServiceCommand {
  name: string;
  /** Its line(s) in the help: what it does. */
  summary: string;
  /** `deep-research <name> --help`. */
  usage: string;
  run(config: Config, argv: string[]): Promise<void>;
}

/** dev, worker and api: the long-running commands (src/serve.ts, loaded when one of them runs). */
function serviceCommand(name: 'dev' | 'worker' | 'api', summary: string): ServiceCommand {
  return {
    name,
    summary,
    usage: [`Usage: deep-research ${name}`, ...summary.split('\n').map((line) => `  ${line}`), CONFIGURATION_NOTE].join('\n'),
    async run(config) {
      const { runService } = await import('./serve');
      return runService(name, config);
    },
  };
}

/** In the order of the help. */
const SERVICE_COMMANDS: readonly ServiceCommand[] = [
  serviceCommand(
    'dev',
    'Start everything on this machine: Temporal dev server + Web UI, PostgreSQL\n(embedded PGlite unless DATABASE_URL is set), a worker and the HTTP API.',
  ),
  serviceCommand('worker', 'Run a worker against TEMPORAL_ADDRESS and DATABASE_URL.'),
  serviceCommand('api', 'Run the HTTP API against TEMPORAL_ADDRESS and DATABASE_URL.'),
  {
    name: 'keys',
    summary: 'Create, list or revoke API keys: keys create --tenant <tenant> (see keys --help).',
    usage: KEYS_USAGE,
    // Keys live in PostgreSQL: no Temporal runtime.
    run: async (config, argv) => {
      const { runKeys } = await import('./cli/keys');
      process.exitCode = await runKeys(config, argv, (t) => process.stdout.write(t));
    },
  },
];

const USAGE = `Usage: deep-research <command>

Commands:
${SERVICE_COMMANDS.map((c) => `  ${c.name.padEnd(9)}${c.summary.replaceAll('\n', `\n${' '.repeat(11)}`)}`).join('\n')}

${CLIENT_USAGE}

${CONFIGURATION_NOTE}`;

/** `--help` or `-h` among a command's arguments (before a `--`, after which all are positional). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** A command's own help, read from the command tables; undefined for an unknown command. */
function commandHelp(name: string): string | undefined {
  const service = SERVICE_COMMANDS.find((c) => c.name === name);
  return service ? `${service.usage}\n` : clientCommandHelp(name);
}

/** The environment's configuration; undefined (the reason printed, exit 2) when it is invalid. */
async function configOrExit(): Promise<Config | undefined> {
  // Loaded here, not at the top: --help reads no configuration and should not pay for loading it.
  const { loadConfig } = await import('./config');
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return undefined;
  }
}

export async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  const { values } = parseArgs({ args: argv.slice(0, 1), allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const help = asksForHelp(argv.slice(1)) ? commandHelp(command) : undefined;
  if (help) {
    process.stdout.write(help);
    return;
  }
  const config = await configOrExit();
  if (!config) return;
  // Commands that only talk to the API or the database need no Temporal runtime.
  if (CLIENT_COMMANDS.includes(command)) {
    const io = terminalIo();
    try {
      process.exitCode = await runClientCommand(command, argv.slice(1), config.client, io);
    } finally {
      io.close();
    }
    return;
  }
  const service = SERVICE_COMMANDS.find((c) => c.name === command);
  if (!service) {
    process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  await service.run(config, argv.slice(1));
}
