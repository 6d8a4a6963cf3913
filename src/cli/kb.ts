// `deep-research kb` and `deep-research session`: collections of the user's documents and
// sessions for follow-up questions, through the HTTP API.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ApiFailure, type ApiClient } from './api-client';
import { defineCommand } from './command-table';
import type { Io } from './io';
import type { CollectionView, DocumentView } from '../shared/knowledge';

export const kbCommand = defineCommand({
  name: 'kb',
  usage: `  kb create <name> [--description TEXT] [--language en]   a collection for your documents
  kb list [<collection>]           collections, or one collection's documents and their progress
  kb add <collection> <file|url>... [--wait]   upload files or add URLs (PDF, DOCX, PPTX, XLSX, CSV, HTML, Markdown, text)
  kb rm <collection> [<document id>]           delete a document, or the whole collection`,
  parse: ({ positionals, flags }) => ({ args: positionals, flags }),
  handle: ({ client, io }, { args, flags }) => runKbCommand(client, io, args, flags),
});

export const sessionCommand = defineCommand({
  name: 'session',
  usage: `  session new ["<title>"]          a session: runs with --session <id> see its earlier questions and reports
  session show <id>`,
  parse: ({ positionals, flags }) => ({ args: positionals, flags }),
  handle: ({ client, io }, { args, flags }) => runSessionCommand(client, io, args, flags),
});

type Collection = CollectionView;
type Doc = DocumentView;

const MIME: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
};

/** A collection named by id or by name. */
export async function resolveCollection(client: ApiClient, ref: string): Promise<Collection> {
  const { collections } = await client.collections.list();
  const found = collections.find((c) => c.id === ref) ?? collections.find((c) => c.name === ref);
  if (!found) throw new ApiFailure(404, 'not_found', `no collection "${ref}" (see deep-research kb list)`);
  return found;
}

const progress = (d: Doc) =>
  `${d.id}  ${d.status.padEnd(9)}  ${d.status === 'embedding' ? `${d.embedded}/${d.chunks} chunks` : `${d.chunks} chunks`}  ${d.name}${d.error ? `\n    ${d.error}` : ''}`;

export async function runKbCommand(
  client: ApiClient,
  io: Io,
  args: string[],
  values: { json?: boolean | undefined; description?: string | undefined; language?: string | undefined; wait?: boolean | undefined },
): Promise<number> {
  const [sub, ...rest] = args;
  const json = (v: unknown) => io.out(`${JSON.stringify(v, null, 2)}\n`);
  const need = (what: string): never => {
    throw new ApiFailure(0, 'usage', `kb ${sub ?? ''} needs ${what}`);
  };
  switch (sub) {
    case 'create': {
      const name = rest.join(' ').trim() || need('a name');
      const c = await client.collections.create({
        name,
        ...(values.description ? { description: values.description } : {}),
        ...(values.language ? { language: values.language } : {}),
      });
      if (values.json) json(c);
      else io.out(`${c.id}  ${c.name}\n`);
      return 0;
    }
    case 'list': {
      if (!rest[0]) {
        const { collections } = await client.collections.list();
        if (values.json) json(collections);
        else if (!collections.length) io.out('no collections (create one: deep-research kb create <name>)\n');
        else
          io.out(
            collections.map((c) => `${c.id}  ${c.name}  ${c.documents} documents, ${c.chunks} chunks  ${c.description}`).join('\n') + '\n',
          );
        return 0;
      }
      const c = await resolveCollection(client, rest[0]);
      const { documents } = await client.collections.documents(c.id);
      if (values.json) json(documents);
      else io.out(documents.length ? documents.map(progress).join('\n') + '\n' : `no documents in ${c.name}\n`);
      return 0;
    }
    case 'add': {
      const [ref, ...items] = rest;
      if (!ref || !items.length) need('a collection and at least one file or URL');
      const c = await resolveCollection(client, ref!);
      const added: Doc[] = [];
      for (const item of items) {
        let doc: Doc;
        if (/^https?:\/\//i.test(item)) {
          doc = await client.collections.addUrl(c.id, item);
        } else {
          if (!statSync(item, { throwIfNoEntry: false })?.isFile()) throw new ApiFailure(0, 'usage', `${item} is not a file`);
          const type = MIME[path.extname(item).toLowerCase()] ?? 'application/octet-stream';
          doc = await client.collections.upload(c.id, new Blob([readFileSync(item)], { type }), path.basename(item));
        }
        added.push(doc);
        if (!values.json) io.out(`${doc.duplicate ? 'already there' : 'added'}: ${progress(doc)}\n`);
      }
      if (values.wait) {
        for (const d of added) {
          let now = d;
          while (!['ready', 'failed'].includes(now.status)) {
            await new Promise((r) => setTimeout(r, 1_000));
            now = await client.collections.document(c.id, d.id);
          }
          if (!values.json) io.out(`${progress(now)}\n`);
          Object.assign(d, now);
        }
      }
      if (values.json) json(added);
      return added.some((d) => d.status === 'failed') ? 1 : 0;
    }
    case 'rm': {
      const [ref, docId] = rest;
      const c = await resolveCollection(client, ref ?? need('a collection'));
      if (docId) await client.collections.deleteDocument(c.id, docId);
      else await client.collections.delete(c.id);
      if (!values.json) io.out(docId ? `deleted ${docId} from ${c.name}\n` : `deleted collection ${c.name}\n`);
      return 0;
    }
    default:
      throw new ApiFailure(0, 'usage', `unknown kb command "${sub ?? ''}": create, list, add or rm`);
  }
}

export async function runSessionCommand(
  client: ApiClient,
  io: Io,
  args: string[],
  values: { json?: boolean | undefined },
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'new') {
    const s = await client.sessions.create(rest.join(' ').trim());
    if (values.json) io.out(`${JSON.stringify(s, null, 2)}\n`);
    else io.out(`${s.id}\n`);
    return 0;
  }
  if (sub === 'show' && rest[0]) {
    const s = await client.sessions.get(rest[0]);
    if (values.json) io.out(`${JSON.stringify(s, null, 2)}\n`);
    else
      io.out(
        [`${s.id}  ${s.title}`, ...(s.runs ?? []).map((r) => `  ${r.id}  ${(r.status ?? '').padEnd(10)}  ${r.question}`)].join('\n') + '\n',
      );
    return 0;
  }
  throw new ApiFailure(0, 'usage', 'session commands: new ["<title>"], show <id>');
}
