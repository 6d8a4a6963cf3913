// User memory's rules without a database: quotes must occur in the user's words, facts that say the
// same merge their evidence, the user's facts are capped, and a deletion's tombstone keeps old
// evidence (and anything said before it) from teaching the fact again.
import { describe, expect, it } from 'vitest';
import { groundFacts, UserFacts } from '../../src/activities/roles/user-memory';
import {
  bearsOut,
  buried,
  groundQuote,
  MEMORY_LIMITS,
  memoryLines,
  mergeFacts,
  normalize,
  sameFact,
  type Evidence,
  type MemoryFact,
  type UserWords,
} from '../../src/shared/memory';

const WORDS: UserWords = [
  {
    kind: 'question',
    text: 'As a hydrologist I prefer peer-reviewed sources: how fast do aquifers recharge?',
    at: '2026-01-01T10:00:00.000Z',
  },
  { kind: 'feedback', text: 'Please, no vendor blogs.', at: '2026-01-01T10:05:00.000Z' },
];

let n = 0;
const newId = () => `F${(++n).toString(16).padStart(16, '0')}`;
const ev = (quote: string, at = '2026-01-01T10:00:00.000Z', researchId = 'r1'): Evidence => ({ researchId, kind: 'question', quote, at });
const fact = (text: string, evidence: Evidence[], updatedAt = '2026-01-01T00:00:00.000Z'): MemoryFact => ({
  id: newId(),
  category: 'field',
  text,
  evidence,
  createdAt: updatedAt,
  updatedAt,
});

describe('user memory rules', () => {
  it('normalizes case, punctuation and spacing, and tells facts that say the same apart from others', () => {
    expect(normalize('  The user is a HYDROLOGIST!  ')).toBe('the user is a hydrologist');
    expect(sameFact('The user is a hydrologist.', 'the user is a hydrologist')).toBe(true);
    expect(sameFact('The user is a hydrologist.', 'User is a trained hydrologist')).toBe(true);
    expect(sameFact('The user is a hydrologist.', 'The user prefers peer-reviewed sources.')).toBe(false);
    expect(sameFact('The user prefers peer-reviewed sources.', 'The user prefers news sources.')).toBe(false);
  });

  it('grounds a quote only in the words the user wrote in the run', () => {
    expect(groundQuote('as a Hydrologist,', WORDS)?.kind).toBe('question');
    expect(groundQuote('no vendor blogs', WORDS)?.kind).toBe('feedback');
    expect(groundQuote('I am a geologist', WORDS)).toBeUndefined();
    expect(groundQuote('a', WORDS)).toBeUndefined();
    const proposed = UserFacts.parse({
      facts: [
        { category: 'field', text: 'The user is a hydrologist.', quotes: ['As a hydrologist', 'I work at a lab'] },
        { category: 'made-up', text: 'The user dislikes vendor blogs.', quotes: ['no vendor blogs'] },
        { category: 'expertise', text: 'The user is an expert.', quotes: ['I am an expert'] },
      ],
    });
    const grounded = groundFacts(proposed.facts, { researchId: 'r1', words: WORDS });
    expect(grounded.map((f) => [f.category, f.text, f.evidence.map((e) => [e.kind, e.quote, e.at])])).toEqual([
      ['field', 'The user is a hydrologist.', [['question', 'As a hydrologist', WORDS[0]!.at]]],
      ['other', 'The user dislikes vendor blogs.', [['feedback', 'no vendor blogs', WORDS[1]!.at]]],
    ]);
  });

  it("keeps a quote only when it bears the fact out: the prompt's example copied onto other words is left out", () => {
    const question =
      'I teach chemistry at a secondary school and I do not want vendor marketing pages: which battery chemistries are safe?';
    // What the real 0.5B model answered in CI: the prompt's own example fact, quoting the whole question.
    expect(bearsOut('The user is new to machine learning.', question)).toBe(false);
    expect(bearsOut('The user is a chemistry teacher.', question)).toBe(true);
    expect(bearsOut('The user does not want vendor marketing pages.', 'I do not want vendor marketing pages')).toBe(true);
    expect(bearsOut('The user does not want anything.', 'I do not want vendor marketing pages')).toBe(false);
    // Facts are in English; a quote in another language is grounded by where it occurs alone.
    expect(bearsOut('The user is a teacher.', 'Ich unterrichte Chemie und möchte keine Werbung von Herstellern')).toBe(true);
    expect(bearsOut('The user is a teacher.', '私は化学の教師です')).toBe(true);
    const words: UserWords = [{ kind: 'question', text: question, at: '2026-01-01T10:00:00.000Z' }];
    const grounded = groundFacts(
      UserFacts.parse({
        facts: [
          { category: 'expertise', text: 'The user is new to machine learning.', quotes: [question] },
          {
            category: 'field',
            text: 'The user teaches chemistry.',
            quotes: ['I teach chemistry at a secondary school and', 'which battery chemistries are safe'],
          },
        ],
      }).facts,
      { researchId: 'r1', words },
    );
    expect(grounded.map((f) => [f.text, f.evidence.map((e) => e.quote)])).toEqual([
      ['The user teaches chemistry.', ['I teach chemistry at a secondary school and', 'which battery chemistries are safe']],
    ]);
  });

  it('bounds what a model proposes: at most 8 facts, 200 characters each', () => {
    const many = UserFacts.parse({
      facts: Array.from({ length: 12 }, (_, i) => ({ category: 'other', text: `${'x'.repeat(300)}${i}`, quotes: ['q'] })),
    });
    expect(many.facts).toHaveLength(MEMORY_LIMITS.factsPerRun);
    expect(Math.max(...many.facts.map((f) => f.text.length))).toBe(200);
  });

  it('merges a fact that says the same as a known one into it, and adds a new one', () => {
    const known = [fact('The user is a hydrologist.', [ev('As a hydrologist')])];
    const r = mergeFacts(
      known,
      [
        { category: 'field', text: 'the user is a hydrologist', evidence: [ev('As a hydrologist', '2026-02-01T00:00:00.000Z', 'r2')] },
        { category: 'sources', text: 'The user prefers peer-reviewed sources.', evidence: [ev('I prefer peer-reviewed sources')] },
      ],
      '2026-02-01T00:00:00.000Z',
      newId,
    );
    expect(r.facts.map((f) => [f.text, f.evidence.length])).toEqual([
      ['The user is a hydrologist.', 2],
      ['The user prefers peer-reviewed sources.', 1],
    ]);
    expect(r.changed).toHaveLength(2);
    // The same evidence again (a retried learning step) changes nothing.
    const again = mergeFacts(
      r.facts,
      [{ category: 'field', text: 'The user is a hydrologist', evidence: [ev('As a hydrologist')] }],
      'later',
      newId,
    );
    expect(again.changed).toEqual([]);
    expect(again.facts).toHaveLength(2);
  });

  it('keeps at most 50 facts per user, dropping the oldest with the least evidence', () => {
    const known = Array.from({ length: MEMORY_LIMITS.factsPerUser }, (_, i) =>
      fact(
        `Fact number ${i} zebra${i}`,
        i === 0 ? [ev('a1'), ev('a2')] : [ev(`q${i}`)],
        `2026-01-${String(10 + (i % 10)).padStart(2, '0')}T00:00:00.000Z`,
      ),
    );
    const r = mergeFacts(
      known,
      [{ category: 'other', text: 'A brand new fact', evidence: [ev('new')] }],
      '2026-03-01T00:00:00.000Z',
      newId,
    );
    expect(r.facts).toHaveLength(MEMORY_LIMITS.factsPerUser);
    expect(r.facts.map((f) => f.text)).toContain('A brand new fact');
    expect(r.facts.map((f) => f.text)).toContain('Fact number 0 zebra0');
    expect(r.dropped).toHaveLength(1);
    const droppedFact = known.find((f) => f.id === r.dropped[0])!;
    expect(droppedFact.updatedAt).toBe('2026-01-10T00:00:00.000Z');
  });

  it('buries old evidence of a deleted fact, and what was said before the deletion, but not new words', () => {
    const tombstones = [
      { norm: normalize('The user is a hydrologist.'), evidence: [ev('As a hydrologist')], deletedAt: '2026-01-02T00:00:00.000Z' },
    ];
    // The same quote of the same run, whatever the fact is called now.
    expect(buried('The user works in hydrology.', ev('As a hydrologist'), tombstones)).toBe(true);
    // Another quote, said before the deletion, for the same fact.
    expect(buried('the user is a hydrologist', ev('I am a hydrologist', '2026-01-01T12:00:00.000Z', 'r0'), tombstones)).toBe(true);
    // Said after the deletion, in a new run: it may teach the fact again.
    expect(buried('The user is a hydrologist.', ev('As a hydrologist', '2026-01-03T00:00:00.000Z', 'r9'), tombstones)).toBe(false);
    // Another fact, said before the deletion, is not touched.
    expect(buried('The user prefers peer-reviewed sources.', ev('peer-reviewed', '2026-01-01T12:00:00.000Z'), tombstones)).toBe(false);
  });

  it('writes the block one fact a line, and nothing without facts', () => {
    expect(memoryLines([{ category: 'field', text: 'The user is a hydrologist.' }])).toBe('- (field) The user is a hydrologist.');
    expect(memoryLines([])).toBe('');
  });
});
