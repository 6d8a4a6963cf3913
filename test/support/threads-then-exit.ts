// A process that parses a document on the parse thread and a large page on the extraction thread,
// then has nothing left to do: it must exit by itself, the threads kept for later work included
// (a kept thread's port once held `deep-research dev` open after Ctrl-C). Spawned by
// test/unit/kb-parse-sandbox.test.ts.
import { toReadable } from '../../src/activities/crawl/extract';
import { DEFAULT_PARSE_CAPS } from '../../src/activities/knowledge/parse-caps';
import { ParseSandbox } from '../../src/activities/knowledge/parse-thread';

const sandbox = new ParseSandbox({ threads: 1, memoryMb: 256, timeoutMs: 60_000, caps: DEFAULT_PARSE_CAPS });
const page = `<html><body><article>${'<p>Grid storage grew again this year, by a measured share.</p>'.repeat(2_000)}</article></body></html>`;
void Promise.all([
  sandbox.parseChunks(Buffer.from('Grid storage notes. '.repeat(200)), 'text', 'notes.txt', { maxTokens: 60, overlapTokens: 0 }),
  toReadable(Buffer.from(page), 'text/html', 'http://fixture.test/long.html'),
]).then(([doc, read]) => process.stdout.write(`parsed ${doc.chunks.length} chunks and ${read.markdown.length} characters\n`));
