// The embedding double must be deterministic, speak OpenAI's /embeddings protocol as the official
// client uses it, fail on demand, and behave enough like a semantic model to find paraphrases.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CJK_CONCEPTS, CONCEPTS, cosine, EMBEDDING_DIMENSIONS, embedText, stem, terms } from '../support/embeddings';
import { ScriptedLlmServer } from '../support/llm-server';

interface Corpus {
  documents: { id: string; title: string; chunks: { id: string; text: string }[] }[];
  queries: { id: string; text: string; relevant: string[]; kind: 'lexical' | 'paraphrase' | 'mixed' }[];
}

type ApiError = InstanceType<typeof OpenAI.APIError>;

const corpus = JSON.parse(readFileSync(new URL('../fixtures/kb/corpus.json', import.meta.url), 'utf8')) as Corpus;
const chunks = corpus.documents.flatMap((d) => d.chunks);
const norm = (v: readonly number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe('embedText', () => {
  it('is deterministic and returns unit vectors of the asked size', () => {
    const text = 'The Marsh Lane battery stores solar output for the evening peak.';
    expect(embedText(text)).toEqual(embedText(text));
    expect(embedText(text)).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(norm(embedText(text))).toBeCloseTo(1, 10);
    expect(embedText(text, 64)).toHaveLength(64);
    expect(norm(embedText(text, 64))).toBeCloseTo(1, 10);
    // Stop words only, or nothing at all: still a unit vector, never NaN.
    for (const t of ['the of and', '']) expect(norm(embedText(t))).toBeCloseTo(1, 10);
    expect(embedText('solar farm')).not.toEqual(embedText('wind farm'));
  });

  it('puts synonyms closer than unrelated words', () => {
    const sim = (a: string, b: string) => cosine(embedText(a), embedText(b));
    expect(sim('solar', 'photovoltaic')).toBeGreaterThan(sim('solar', 'turbine'));
    expect(sim('battery', 'accumulator')).toBeGreaterThan(sim('battery', 'reservoir'));
    expect(sim('cheap', 'expensive')).toBeGreaterThan(sim('cheap', 'emissions'));
    expect(sim('photovoltaic output fell', 'solar generation dropped')).toBeGreaterThan(
      sim('photovoltaic output fell', 'hydrogen caverns'),
    );
    // An exact word still beats its synonym.
    expect(sim('solar', 'solar')).toBeGreaterThan(sim('solar', 'photovoltaic'));
  });

  it('keeps every word of CONCEPTS in one group only', () => {
    const seen = new Map<string, string>();
    for (const [group, words] of Object.entries(CONCEPTS)) {
      for (const w of words) {
        const s = stem(w);
        expect(seen.get(s) ?? group, `${w} is in ${seen.get(s)} and ${group}`).toBe(group);
        seen.set(s, group);
      }
    }
    expect(Object.keys(CONCEPTS).length).toBeGreaterThanOrEqual(20);
  });

  it('reads Chinese through CJK_CONCEPTS and bigrams, and a text without CJK as before', () => {
    const sim = (a: string, b: string) => cosine(embedText(a), embedText(b));
    expect(sim('扎针治头疼', '针刺治疗偏头痛')).toBeGreaterThan(sim('扎针治头疼', '高铁的运营时速'));
    expect(sim('旧电池回收', '退役的动力电池拆解再生')).toBeGreaterThan(sim('旧电池回收', '茶叶冷藏保存'));
    // Chinese words share the English group where it has one: 电池 is near "battery".
    expect(sim('电池', 'battery')).toBeGreaterThan(sim('电池', 'turbine'));
    // An unknown Chinese text is not the "empty" vector: its bigrams give it a direction of its own.
    expect(embedText('莫高窟')).not.toEqual(embedText('敦煌'));
    // Adding CJK features changes nothing for text without CJK (the English corpus's vectors stay put).
    expect(embedText('Battery storage at Marsh Lane')).toEqual(embedText('Battery storage at Marsh Lane 。'));
    const seen = new Map<string, string>();
    for (const [group, words] of Object.entries(CJK_CONCEPTS)) {
      for (const w of words) {
        expect(seen.get(w) ?? group, `${w} is in ${seen.get(w)} and ${group}`).toBe(group);
        seen.set(w, group);
      }
    }
  });
});

describe('scripted LLM server /embeddings', () => {
  const llm = new ScriptedLlmServer();
  let client: OpenAI;
  beforeAll(async () => {
    await llm.start();
    // llm.url already ends in /v1, as a provider's base URL does.
    client = new OpenAI({ baseURL: llm.url, apiKey: 'sk-x', maxRetries: 0, timeout: 5_000 });
  });
  beforeEach(() => llm.resetEmbeddings());
  afterAll(() => llm.close());

  it('answers the client default (base64) and float with the same float32 vectors', async () => {
    const input = ['Pumped storage holds energy for fifty hours.', 'Wind farms at sea.'];
    const viaBase64 = await client.embeddings.create({ model: 'text-embedding-3-small', input });
    const viaFloat = await client.embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'float' });
    for (const res of [viaBase64, viaFloat]) {
      expect(res.object).toBe('list');
      expect(res.model).toBe('text-embedding-3-small');
      expect(res.data.map((d) => [d.object, d.index])).toEqual([
        ['embedding', 0],
        ['embedding', 1],
      ]);
      expect(res.data.map((d) => d.embedding)).toEqual(input.map((t) => embedText(t).map(Math.fround)));
      expect(res.usage.prompt_tokens).toBeGreaterThan(0);
      expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
    }
    expect(llm.embeddingRequests.map((r) => [r.encodingFormat, r.inputs, r.status, r.authorization])).toEqual([
      ['base64', 2, 200, 'Bearer ***'],
      ['float', 2, 200, 'Bearer ***'],
    ]);
  });

  it('honours dimensions, a single string input and the path without /v1', async () => {
    const res = await client.embeddings.create({ model: 'm', input: 'grid inertia', dimensions: 64, encoding_format: 'float' });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]!.embedding).toEqual(embedText('grid inertia', 64).map(Math.fround));
    const raw = await fetch(`${llm.url.replace(/\/v1$/, '')}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: ['grid inertia'], encoding_format: 'base64' }),
    });
    const body = (await raw.json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(body.data[0]!.embedding, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(embedText('grid inertia').map(Math.fround));
  });

  it('rejects empty input like OpenAI does', async () => {
    for (const input of ['', [], ['fine', '  ']]) {
      const err = await client.embeddings.create({ model: 'm', input }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.type).toBe('invalid_request_error');
      expect(e.message).toContain("'$.input' is invalid");
    }
    expect(llm.embeddingRequests.map((r) => r.status)).toEqual([400, 400, 400]);
  });

  it('fails the next N calls with the injected status, then recovers', async () => {
    llm.failEmbeddings(2, 503).failEmbeddings(1, 429, { headers: { 'retry-after': '1' } });
    const call = () => client.embeddings.create({ model: 'm', input: 'x' }).catch((e: unknown) => e);
    const first = await call();
    expect(first).toBeInstanceOf(OpenAI.InternalServerError);
    expect((first as ApiError).status).toBe(503);
    expect(((await call()) as ApiError).status).toBe(503);
    const limited = await call();
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as ApiError).headers?.get('retry-after')).toBe('1');
    const ok = await client.embeddings.create({ model: 'm', input: 'x' });
    expect(ok.data).toHaveLength(1);
    expect(llm.embeddingRequests.map((r) => r.status)).toEqual([503, 503, 429, 200]);
  });

  it('holds a fixed delay before every answer', async () => {
    llm.embeddingDelayMs = 200;
    const t0 = Date.now();
    await client.embeddings.create({ model: 'm', input: 'slow' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    const [entry] = llm.embeddingRequests;
    expect(entry!.endedAt! - entry!.startedAt).toBeGreaterThanOrEqual(190);
  });
});

describe('retrieval fixture test/fixtures/kb/corpus.json', () => {
  it('is well formed', () => {
    const ids = new Set(chunks.map((c) => c.id));
    expect(corpus.documents.length).toBeGreaterThanOrEqual(6);
    expect(chunks.length).toBeGreaterThanOrEqual(60);
    expect(ids.size).toBe(chunks.length);
    for (const c of chunks) expect(c.text.split(/\s+/).length, c.id).toBeGreaterThanOrEqual(40);
    for (const c of chunks) expect(c.text.split(/\s+/).length, c.id).toBeLessThanOrEqual(120);
    expect(corpus.queries.length).toBeGreaterThanOrEqual(18);
    for (const q of corpus.queries) {
      expect(q.relevant.length, q.id).toBeGreaterThanOrEqual(1);
      expect(q.relevant.length, q.id).toBeLessThanOrEqual(3);
      for (const r of q.relevant) expect(ids.has(r), `${q.id} → ${r}`).toBe(true);
    }
    for (const kind of ['lexical', 'paraphrase', 'mixed']) {
      expect(corpus.queries.filter((q) => q.kind === kind).length, kind).toBeGreaterThanOrEqual(6);
    }
  });

  it('gives paraphrase queries no content word in common with their relevant chunks', () => {
    // Approximates PostgreSQL's english stemmer with the double's own; the point is that
    // full-text search has nothing to match, so only the embeddings can find these.
    for (const q of corpus.queries.filter((x) => x.kind === 'paraphrase')) {
      const words = new Set(terms(q.text));
      for (const r of q.relevant) {
        const shared = terms(chunks.find((c) => c.id === r)!.text).filter((w) => words.has(w));
        expect(shared, `${q.id} and ${r}`).toEqual([]);
      }
    }
  });

  it('lets the embedder alone find paraphrases (recall@5 by query kind)', () => {
    const vectors = new Map(chunks.map((c) => [c.id, embedText(c.text)]));
    const recall: Record<string, number[]> = {};
    for (const q of corpus.queries) {
      const qv = embedText(q.text);
      const top5 = chunks
        .map((c) => ({ id: c.id, score: cosine(qv, vectors.get(c.id)!) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 5)
        .map((c) => c.id);
      (recall[q.kind] ??= []).push(q.relevant.filter((r) => top5.includes(r)).length / q.relevant.length);
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const summary = Object.fromEntries(Object.entries(recall).map(([kind, xs]) => [kind, Number(mean(xs).toFixed(2))]));
    console.log('embedText recall@5 by query kind:', summary);
    // A low floor: this shows the double works, not how good a real model would be.
    expect(summary.paraphrase).toBeGreaterThanOrEqual(0.5);
  });
});
