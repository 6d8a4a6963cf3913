// Token counting (src/activities/llm/bpe.ts) against js-tiktoken's encoder it replaced, in one run:
// the heap each keeps for cl100k_base, the time to build each, and the time to encode the same
// text (the prompts, the fixture site's pages as text, and generated prose in several scripts),
// alternating rounds so both see the same machine. Prints each figure and the ratio (ours ÷ theirs),
// and whether the ids were the same.
//   node --expose-gc bin/run-ts.mjs bench/tokenizer.ts [--rounds 10] [--family cl100k|o200k]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { BytePairEncoder } from '../src/activities/llm/bpe';
import { SITE_DIR } from '../test/support/fixture-site';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, family: { type: 'string', default: 'cl100k' } } });
const rounds = Number(values.rounds);
const ranks = values.family === 'o200k' ? o200k : cl100k;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const root = path.join(import.meta.dirname, '..');
const files = (dir: string, ext: string) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ext))
    .map((f) => readFileSync(path.join(dir, f), 'utf8'));
const prose = [
  'Solar module prices fell about 90% between 2010 and 2022, while utility-scale costs per MWh dropped by two thirds. ',
  '太阳能组件价格在2010年至2022年间下降了约90%，公用事业规模的发电成本下降了三分之二。',
  'Цены на солнечные модули упали примерно на 90% с 2010 по 2022 год. ',
  'Les prix des modules solaires ont baissé d’environ 90 % entre 2010 et 2022. ',
];
const corpus = [
  ...files(path.join(root, 'prompts'), '.md'),
  ...files(SITE_DIR, '.html').map((h) => h.replace(/<[^>]+>/g, ' ')),
  ...prose.map((p) => p.repeat(200)),
];
const chars = corpus.reduce((n, t) => n + t.length, 0);

function heldBy(make: () => unknown): { mb: number; ms: number; kept: unknown } {
  gc!();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const kept = make();
  const ms = performance.now() - t0;
  gc!();
  return { mb: (process.memoryUsage().heapUsed - before) / 1048576, ms, kept };
}

const theirs = heldBy(() => new Tiktoken(ranks));
const ours = heldBy(() => new BytePairEncoder(ranks));
const reference = theirs.kept as Tiktoken;
const compact = ours.kept as BytePairEncoder;

let same = true;
for (const text of corpus) if (JSON.stringify(compact.encode(text)) !== JSON.stringify(reference.encode(text, [], []))) same = false;

const time = (fn: () => void) => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < rounds; r++) {
  b.push(time(() => corpus.forEach((t) => reference.encode(t, [], []))));
  a.push(time(() => corpus.forEach((t) => compact.encode(t))));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const ratios = a.map((x, i) => x / b[i]!);
const geo = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);

console.log(`tokenizer: ${values.family}, ${corpus.length} texts, ${(chars / 1e6).toFixed(2)} M characters, ${rounds} rounds`);
console.log(`same ids:     ${same ? 'yes' : 'NO'}`);
console.log(
  `heap kept:    js-tiktoken ${theirs.mb.toFixed(1)} MB, compact ${ours.mb.toFixed(1)} MB (ratio ${(ours.mb / theirs.mb).toFixed(2)})`,
);
console.log(
  `build:        js-tiktoken ${theirs.ms.toFixed(0)} ms, compact ${ours.ms.toFixed(0)} ms (ratio ${(ours.ms / theirs.ms).toFixed(2)})`,
);
console.log(
  `encode:       js-tiktoken ${median(b).toFixed(0)} ms, compact ${median(a).toFixed(0)} ms per round (medians); ratio per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, geometric mean ${geo.toFixed(2)}`,
);
if (!same) process.exitCode = 1;
