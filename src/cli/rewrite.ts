// `deep-research rewrite <id>`: a new version of a finished run's report from the same findings
// (another length, language, audience, instructions or model). It waits for the version and prints
// it, unless --no-wait; `report <id> --version N` reads any version later.
import { defineCommand, UsageError, type CommandContext } from './command-table';
import type { RewriteRequest } from '../client';
import { ReportLength } from '../shared/schemas';

/** How often the command asks whether the version is written. */
const POLL_MS = 1_000;

export const rewriteCommand = defineCommand({
  name: 'rewrite',
  usage: `  rewrite <id> [--length brief|standard|long] [--locale de] [--audience TEXT] [--instructions TEXT] [--model NAME] [--no-wait]
      a new version of the finished run's report from the same findings (no new search); prints it when written`,
  parse: ({ positionals, flags, need }) => {
    const id = positionals[0] ?? need('a run id');
    if (flags.length !== undefined && !ReportLength.safeParse(flags.length).success) {
      throw new UsageError(`--length must be ${ReportLength.options.join(', ')}, not "${flags.length}"`);
    }
    const body: RewriteRequest = {
      ...(flags.length ? { reportLength: flags.length as ReportLength } : {}),
      ...(flags.locale ? { locale: flags.locale } : {}),
      ...(flags.audience ? { audience: flags.audience } : {}),
      ...(flags.instructions ? { instructions: flags.instructions } : {}),
      ...(flags.model ? { model: flags.model } : {}),
    };
    if (!Object.keys(body).length) need('at least one of --length, --locale, --audience, --instructions, --model');
    return { id, body, wait: !flags['no-wait'] };
  },
  async handle(context, { id, body, wait }) {
    const { client, io, json, printJson } = context;
    const started = await client.research.rewrite(id, body);
    if (!wait) {
      if (json) printJson(started);
      else
        io.out(
          `version ${started.version} of ${id}: ${started.status} (read it with: deep-research report ${id} --version ${started.version})\n`,
        );
      return 0;
    }
    const done = await waitForVersion(context, id, started.version);
    if (json) printJson(done);
    else if (done.status === 'ready')
      io.out(`# version ${done.version} of ${id}\n\n${await client.research.report(id, 'markdown', done.version)}`);
    else io.err(`version ${done.version} of ${id} failed: ${done.error ?? 'unknown'}\n`);
    return done.status === 'ready' ? 0 : 1;
  },
});

async function waitForVersion({ client }: CommandContext, id: string, version: number) {
  for (;;) {
    const found = (await client.research.versions(id)).versions.find((v) => v.version === version);
    if (found && found.status !== 'writing') return found;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
