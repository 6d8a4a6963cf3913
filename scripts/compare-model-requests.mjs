#!/usr/bin/env node
// Compares the requests two versions of the code sent the scripted model, test file by test file:
//   LLM_REQUEST_DUMP=<dir> npx vitest run <files>     (once per version, each into its own dir)
//   node scripts/compare-model-requests.mjs <dir A> <dir B>
// A request is its rule, model, messages, tools and answer format, with what differs from run to
// run by chance made the same: ports, UUIDs, source ids (a hash of a URL with a port in it), times
// (the prompt's current time too), the scripted model's tool-call ids, durations, random hex. Each file's requests are compared as a multiset (steps run in parallel, so their
// order is not fixed). Prints what one version sent that the other did not, and says of a file
// whose requests hold the same text in another order (ORDER) that it differs only so; exits 1 when
// any file differs.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [a, b] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: compare-model-requests.mjs <dump dir A> <dump dir B>');
  process.exit(2);
}

const normalize = (text) =>
  text
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/Current date and time: [^.]*UTC/g, 'Current date and time: <now>')
    .replace(/Current date: \w+, \d{4}-\d{2}-\d{2} \(UTC\)/g, 'Current date: <today>')
    .replace(/\bcall_\d+_\d+\b/g, 'call_<n>')
    .replace(/\bin \d+ ms\b/g, 'in <n> ms')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/(127\.0\.0\.1|localhost):\d+/g, '$1:<port>')
    .replace(/\bS[0-9a-f]{8}\b/g, 'S<id>')
    .replace(/\b[0-9a-f]{16,}\b/g, '<hex>');

function requests(dir, file) {
  const counts = new Map();
  let text = '';
  try {
    text = readFileSync(path.join(dir, file), 'utf8');
  } catch {
    return counts;
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    const { rule, body = {} } = JSON.parse(line);
    const key = normalize(
      JSON.stringify({
        rule,
        model: body.model,
        messages: body.messages,
        tools: (body.tools ?? []).map((t) => t.function?.name),
        format: body.response_format?.json_schema?.name ?? body.response_format?.type ?? null,
      }),
    );
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Whether two lists of requests (with counts) hold the same letters request by request. */
function sameLetters(a, b) {
  const letters = (list) =>
    list
      .flatMap(([key, k]) => Array(k).fill([...key].sort().join('')))
      .sort()
      .join('\n');
  return letters(a) === letters(b);
}

/** The key of `list` that shares the longest start with `key`, and where they part. */
function nearest(key, list) {
  let best;
  let at = -1;
  for (const [other] of list) {
    let i = 0;
    while (i < key.length && key[i] === other[i]) i++;
    if (i > at) [best, at] = [other, i];
  }
  return [best, at];
}

const files = [...new Set([...readdirSync(a), ...readdirSync(b)])].filter((f) => f.endsWith('.jsonl')).sort();
let differ = 0;
let reorderedFiles = 0;
let total = 0;
for (const file of files) {
  const [ra, rb] = [requests(a, file), requests(b, file)];
  const onlyA = [];
  const onlyB = [];
  for (const key of new Set([...ra.keys(), ...rb.keys()])) {
    const d = (ra.get(key) ?? 0) - (rb.get(key) ?? 0);
    if (d > 0) onlyA.push([key, d]);
    if (d < 0) onlyB.push([key, -d]);
  }
  const n = [...ra.values()].reduce((x, y) => x + y, 0);
  total += n;
  const m = [...rb.values()].reduce((x, y) => x + y, 0);
  // Parallel work (pages read at once, steps side by side) puts the same parts of a prompt in
  // another order from run to run: a file whose requests differ only so is told apart, by the
  // characters of each request taken as a multiset.
  const reordered = onlyA.length > 0 && sameLetters(onlyA, onlyB);
  const verdict = onlyA.length || onlyB.length ? (reordered ? 'ORDER  ' : 'DIFFERS') : 'same   ';
  console.log(`${verdict} ${file}: ${n} / ${m} requests`);
  if (reordered) reorderedFiles++;
  // Each request only A sent, beside the one only B sent that shares the longest start with it:
  // where the two first part, so that what changed can be read.
  for (const [key, k] of onlyA) {
    const [near, at] = nearest(key, onlyB);
    console.log(`    only A (${k}x): ${key.slice(0, 160)}`);
    if (near !== undefined)
      console.log(
        `      A at ${at}: …${key.slice(Math.max(0, at - 80), at + 160)}\n      B at ${at}: …${near.slice(Math.max(0, at - 80), at + 160)}`,
      );
  }
  for (const [key, k] of onlyB) console.log(`    only B (${k}x): ${key.slice(0, 160)}`);
  if (onlyA.length || onlyB.length) differ++;
}
console.log(
  `${files.length} files, ${total} requests in A; ${differ} file(s) differ, ${reorderedFiles} of them only in the order of their parts`,
);
process.exit(differ ? 1 : 0);
