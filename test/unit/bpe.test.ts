// The compact byte-pair encoder must give exactly js-tiktoken's ids and text, for both families,
// on the prompts, on text in many scripts, and on text built to be awkward (long merges, lone
// surrogates, special tokens' text, whitespace runs); and hold far less memory.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BytePairEncoder, type RankFile } from '../../src/activities/llm/bpe';

/** A fixed pseudo-random sequence (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SAMPLES = [
  'Solar module prices fell about 90% between 2010 and 2022 [S00000001].',
  '太阳能组件价格在2010年至2022年间下降了约90%。日本語の文章も。한국어 문장.',
  'Ценыны на солнечные модули упали; أسعار الطاقة الشمسية انخفضت; שלום עולם',
  'emoji 👩‍👩‍👧‍👦 🇯🇵 ✔︎ and combining: e\u0301 a\u0308 \u200d\u200c',
  'lone surrogates \ud800 and \udfff inside text \ud83d',
  '<|endoftext|> <|fim_prefix|> <|endofprompt|> are plain text here',
  "It's they're we've I'm you'll he'd THEY'RE 'S",
  '1234567890 3.14159 1,000,000 0x1F 2024-11-26T05:53:58Z',
  '    indented\n\n\n\ttabs\r\n\r\n   \n trailing   ',
  'a'.repeat(200),
  'xyz'.repeat(100),
  '—'.repeat(50) + '…'.repeat(50),
  'https://example.com/path?q=solar+cost&lang=en#section-2',
  '```ts\nconst x: Record<string, number> = { a: 1 };\n```',
];

function randomText(rnd: () => number, length: number): string {
  const pools = [
    'abcdefghijklmnopqrstuvwxyz      ',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    '.,;:!?\'"()[]{}<>-_=+*/\\|@#$%^&~`\n\t\r',
    '的一是不了人我在有他这中大来上国个到说们',
    'αβγδεζηθικλμνξοπρστυφχψω',
    'абвгдеёжзийклмнопрстуфхцчшщъыьэюя',
    '😀🚀🌍✨🔥💡',
  ];
  let out = '';
  while (out.length < length) {
    const pool = [...pools[Math.floor(rnd() * pools.length)]!];
    const run = 1 + Math.floor(rnd() * 12);
    for (let i = 0; i < run; i++) out += pool[Math.floor(rnd() * pool.length)]!;
  }
  return out;
}

const PROMPTS_DIR = path.join(import.meta.dirname, '../../prompts');
const prompts = readdirSync(PROMPTS_DIR)
  .filter((f) => f.endsWith('.md'))
  .map((f) => readFileSync(path.join(PROMPTS_DIR, f), 'utf8'));

/** What `make` keeps on the heap once garbage is collected, in bytes, and what it made. */
function weigh<T>(make: () => T): { made: T; bytes: number } {
  // A collector to call, so the heap figures are what each encoder keeps, not garbage.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const made = make();
  gc();
  const bytes = process.memoryUsage().heapUsed - before;
  expect(made).toBeDefined();
  return { made, bytes };
}

// The cl100k_base encoders are weighed as they are built, before anything else big is on the heap
// (a full collection is quick there), and the memory test reads those weights: each encoder is
// built once per family in the file.
const cl100kHeap: { ours?: number; theirs?: number } = {};
function cl100kEncoders() {
  const ours = weigh(() => new BytePairEncoder(cl100k));
  const theirs = weigh(() => new Tiktoken(cl100k));
  [cl100kHeap.ours, cl100kHeap.theirs] = [ours.bytes, theirs.bytes];
  return { reference: theirs.made, compact: ours.made };
}
const encoders = (ranks: RankFile) => ({ reference: new Tiktoken(ranks), compact: new BytePairEncoder(ranks) });

describe.each([
  ['cl100k', cl100kEncoders],
  ['o200k', () => encoders(o200k)],
] as const)('BytePairEncoder (%s)', (_name, build) => {
  let built: ReturnType<typeof encoders> | undefined;
  beforeAll(() => {
    built = build();
  });
  // Let them go: the next family's tables are large, and collections then need not trace these.
  afterAll(() => {
    built = undefined;
  });

  it('gives the same ids and text as js-tiktoken on samples, prompts and random text', () => {
    const { reference, compact } = built!;
    const rnd = random(37);
    const texts = [...SAMPLES, ...prompts, ...Array.from({ length: 300 }, () => randomText(rnd, 20 + Math.floor(rnd() * 400)))];
    for (const text of texts) {
      const ids = compact.encode(text);
      expect(ids, text.slice(0, 80)).toEqual(reference.encode(text, [], []));
      expect(compact.decode(ids)).toBe(reference.decode(ids));
    }
    expect(prompts.length).toBeGreaterThan(10);
  });

  it('decodes ids cut through a character, and arbitrary ids, as js-tiktoken does', () => {
    const { reference, compact } = built!;
    const rnd = random(7);
    const ids = compact.encode(SAMPLES[1]! + SAMPLES[3]!);
    for (let cut = 1; cut < ids.length; cut++) expect(compact.decode(ids.slice(cut))).toBe(reference.decode(ids.slice(cut)));
    for (let k = 0; k < 200; k++) {
      const some = Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => Math.floor(rnd() * 100_000));
      expect(compact.decode(some)).toBe(reference.decode(some));
    }
  });
});

describe('BytePairEncoder memory', () => {
  it('holds well under half the heap js-tiktoken holds for cl100k_base', () => {
    if (cl100kHeap.ours === undefined) cl100kEncoders(); // this test alone: weigh them here
    expect(cl100kHeap.ours).toBeLessThan(cl100kHeap.theirs! / 2);
  });
});
