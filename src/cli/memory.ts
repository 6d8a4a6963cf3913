// `deep-research memory`: what the service remembers about a user, through the HTTP API: the facts
// with the quotes they came from, a correction, a deletion, or forgetting everything.
import { defineCommand, UsageError } from './command-table';
import type { MemoryFact, MemoryView } from '../client';
import { plural } from '../shared/plural';

function describe(m: MemoryView): string {
  const head = `memory of ${m.userId} (tenant ${m.tenant})${m.enabled ? '' : ' — off for this key: its runs neither use nor teach it'}`;
  if (!m.facts.length) return `${head}\n  nothing remembered\n`;
  const fact = (f: MemoryFact) =>
    [
      `  ${f.id}  [${f.category}] ${f.text}`,
      ...f.evidence.map((e) => `      "${e.quote}" (${e.kind} in ${e.researchId}, ${e.at.slice(0, 16).replace('T', ' ')})`),
    ].join('\n');
  return `${head}\n${m.facts.map(fact).join('\n')}\n`;
}

type MemoryArgs =
  | { sub: 'list'; userId?: string | undefined }
  | { sub: 'edit'; factId: string; text: string }
  | { sub: 'delete'; factId: string }
  | { sub: 'forget-all'; userId?: string | undefined };

export const memoryCommand = defineCommand<MemoryArgs>({
  name: 'memory',
  usage: `  memory [list] [--user ID]                   what the service remembers about you (or user ID): facts, their quotes
  memory edit <fact-id> <text>                correct a fact
  memory delete <fact-id>                     delete a fact; what it was learned from never teaches it again
  memory forget-all [--user ID]               delete every fact`,
  parse: ({ positionals, flags, need }) => {
    const [sub = 'list', id, ...rest] = positionals;
    const userId = flags.user;
    switch (sub) {
      case 'list':
      case 'forget-all':
        if (id !== undefined) throw new UsageError(`memory ${sub} takes no argument (use --user ID)`);
        return { sub, userId };
      case 'edit':
        if (!id || !rest.length) return need('a fact id and the new text');
        return { sub, factId: id, text: rest.join(' ') };
      case 'delete':
        if (!id || rest.length) return need('one fact id');
        return { sub, factId: id };
      default:
        throw new UsageError(`memory takes list, edit, delete or forget-all, not ${sub}`);
    }
  },
  handle: async ({ client, io, json, printJson }, args) => {
    switch (args.sub) {
      case 'list': {
        const m = await client.memory.list(args.userId);
        if (json) printJson(m);
        else io.out(describe(m));
        return 0;
      }
      case 'edit': {
        const f = await client.memory.edit(args.factId, { text: args.text });
        if (json) printJson(f);
        else io.out(`${f.id} is now: ${f.text}\n`);
        return 0;
      }
      case 'delete': {
        const d = await client.memory.delete(args.factId);
        if (json) printJson(d);
        else io.out(`${d.id} deleted\n`);
        return 0;
      }
      case 'forget-all': {
        const r = await client.memory.forgetAll(args.userId);
        if (json) printJson(r);
        else io.out(`${plural(r.deleted, 'fact')} about ${r.userId} deleted\n`);
        return 0;
      }
    }
  },
});
