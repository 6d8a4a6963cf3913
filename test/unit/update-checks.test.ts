// The rules of the review and steering messages are written once (src/shared/updates.ts): the
// workflow checks a message by them without zod (src/shared/message-rules.ts), the API with the zod
// schemas built from them (src/shared/update-schemas.ts). For each message below, both must accept
// or both refuse, and an accepted message must come out the same (trimmed, lower-cased, defaults
// filled), or a run would take what the API refused or the reverse.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { AnswerClarification, ApprovePlan, RevisePlan, Steer } from '../../src/shared/update-schemas';
import { checkAnswerClarification, checkApprovePlan, checkRevisePlan, checkSteer, type Checked } from '../../src/shared/updates';

const long = (n: number) => 'x'.repeat(n);
const step = { id: 'c', title: 'More', description: 'Look further' };

const cases: [string, z.ZodType, (m: unknown) => Checked<unknown>, unknown[]][] = [
  [
    'approvePlan',
    ApprovePlan,
    checkApprovePlan,
    [
      { planVersion: 1 },
      { planVersion: 7, extra: 1 },
      { planVersion: 0 },
      { planVersion: 1.5 },
      { planVersion: '1' },
      {},
      null,
      'x',
      [1],
      { planVersion: Infinity },
      { planVersion: NaN },
      { planVersion: 2 ** 53 - 1 },
      { planVersion: 2 ** 53 },
    ],
  ],
  [
    'revisePlan',
    RevisePlan,
    checkRevisePlan,
    [
      { planVersion: 1, feedback: ' shorter ' },
      { planVersion: 1, feedback: '   ' },
      { planVersion: 1, feedback: long(4_000) },
      { planVersion: 1, feedback: ` ${long(4_000)} ` },
      { planVersion: 1, feedback: long(4_001) },
      { planVersion: -1, feedback: 'x' },
      { planVersion: 1 },
      { feedback: 'x' },
      { planVersion: 1, feedback: null },
      { planVersion: 1, feedback: 'x', extra: 1 },
      // The reviewer's edits, with feedback or without.
      { planVersion: 1, edits: [{ kind: 'setTitle', stepId: 'a', title: ' Shorter ' }] },
      { planVersion: 1, feedback: ' ', edits: [{ kind: 'remove', stepId: 'b' }] },
      { planVersion: 1, edits: [] },
      {
        planVersion: 1,
        edits: [
          { kind: 'setType', stepId: 'a', type: 'processing' },
          { kind: 'setDependencies', stepId: 'a', dependsOn: [] },
        ],
      },
      { planVersion: 1, edits: [{ kind: 'setDescription', stepId: 'a', description: ' ' }] },
      { planVersion: 1, edits: [{ kind: 'setType', stepId: 'a', type: 'poetry' }] },
      { planVersion: 1, edits: [{ kind: 'rename', stepId: 'a' }] },
      { planVersion: 1, edits: [{ kind: 'remove', stepId: 'a', extra: 1 }] },
      { planVersion: 1, edits: [{ kind: 'add', step: { id: 'n', title: 'New', description: 'What it does' } }] },
      { planVersion: 1, edits: [{ kind: 'add', step: { id: 'N!', title: '', description: 'x' } }] },
      { planVersion: 1, edits: Array.from({ length: 21 }, () => ({ kind: 'remove', stepId: 'a' })) },
    ],
  ],
  [
    'answerClarification',
    AnswerClarification,
    checkAnswerClarification,
    [{ answer: ' Europe ' }, { answer: '' }, { answer: 3 }, {}, { answer: 'x', more: true }],
  ],
  [
    'steer',
    Steer,
    checkSteer,
    [
      { kind: 'guidance', text: ' focus on Europe ' },
      { kind: 'guidance', text: ' ' },
      { kind: 'guidance', text: 'x', extra: 1 },
      { kind: 'guidance' },
      { kind: 'wrapUp' },
      { kind: 'wrapUp', now: true },
      { kind: 'nope' },
      { kind: 3 },
      { kind: 'wrapUp', toString: 1 },
      {},
      null,
      { kind: 'banDomains', domains: [' Example.COM ', 'sub.example.org'] },
      { kind: 'banDomains', domains: [] },
      { kind: 'banDomains', domains: ['http://example.com'] },
      { kind: 'banDomains', domains: ['example.com/path'] },
      { kind: 'banDomains', domains: [''] },
      { kind: 'banDomains', domains: Array.from({ length: 21 }, (_, i) => `d${i}.com`) },
      { kind: 'banDomains', domains: 'example.com' },
      { kind: 'mustRead', urls: ['https://example.com/a'] },
      { kind: 'mustRead', urls: [' http://example.com/a?b=1 '] },
      { kind: 'mustRead', urls: ['https://exa\nmple.com/x'] },
      { kind: 'mustRead', collections: ['papers'] },
      { kind: 'mustRead', urls: [], collections: [] },
      { kind: 'mustRead' },
      { kind: 'mustRead', urls: null, collections: ['papers'] },
      { kind: 'mustRead', urls: ['https://example.com/a'], collections: [''] },
      { kind: 'mustRead', urls: ['ftp://example.com/a'] },
      { kind: 'mustRead', urls: ['http:example.com'] },
      { kind: 'mustRead', urls: ['https:/example.com'] },
      { kind: 'mustRead', urls: ['not a url'] },
      { kind: 'mustRead', urls: ['javascript:alert(1)'] },
      { kind: 'mustRead', urls: [`https://example.com/${long(2_000)}`] },
      { kind: 'mustRead', urls: Array.from({ length: 11 }, (_, i) => `https://example.com/${i}`) },
      { kind: 'mustRead', collections: [''] },
      { kind: 'mustRead', collections: [long(101)] },
      { kind: 'mustRead', collections: [' spaced '] },
      { kind: 'addStep', step },
      { kind: 'addStep', step: { ...step, title: ' More ', type: 'processing', needSearch: false, dependsOn: ['a', 'b'] } },
      { kind: 'addStep', step: { ...step, id: 'C' } },
      { kind: 'addStep', step: { ...step, id: long(33) } },
      { kind: 'addStep', step: { ...step, title: ' ' } },
      { kind: 'addStep', step: { ...step, title: long(201) } },
      { kind: 'addStep', step: { ...step, type: 'writing' } },
      { kind: 'addStep', step: { ...step, needSearch: 'yes' } },
      { kind: 'addStep', step: { ...step, needSearch: null } },
      { kind: 'addStep', step: { ...step, type: null } },
      { kind: 'addStep', step: { ...step, dependsOn: null } },
      { kind: 'addStep', step: { ...step, id: undefined } },
      { kind: 'addStep', step: [] },
      { kind: 'addStep', step: { ...step, dependsOn: Array.from({ length: 13 }, (_, i) => `s${i}`) } },
      { kind: 'addStep', step: { ...step, dependsOn: [1] } },
      { kind: 'addStep', step: { ...step, unknown: 1 } },
      { kind: 'addStep' },
      { kind: 'dropStep', stepId: 'a' },
      { kind: 'dropStep', stepId: '' },
      { kind: 'dropStep', stepId: ' a ' },
      { kind: 'editStep', stepId: 'a', description: ' narrower ' },
      { kind: 'editStep', stepId: 'a', description: '' },
      { kind: 'editStep', stepId: 'a' },
      { kind: 'editStep', stepId: 'a', description: long(4_001) },
    ],
  ],
];

describe('update checks without zod', () => {
  for (const [name, schema, check, messages] of cases) {
    it(`${name}: the workflow accepts, refuses and fills in what the API does`, () => {
      for (const m of messages) {
        const zod = schema.safeParse(m);
        const plain = check(m);
        expect({ message: m, ok: plain.ok }).toEqual({ message: m, ok: zod.success });
        if (plain.ok && zod.success) expect(plain.value).toEqual(zod.data);
        if (!plain.ok) expect(plain.error).toMatch(/^[\w.]+: /);
      }
    });
  }

  it('fills a default with a new list each time', () => {
    const first = checkSteer({ kind: 'mustRead', collections: ['papers'] });
    if (first.ok && first.value.kind === 'mustRead') first.value.urls.push('https://example.com/');
    expect(checkSteer({ kind: 'mustRead', collections: ['papers'] })).toEqual({
      ok: true,
      value: { kind: 'mustRead', urls: [], collections: ['papers'] },
    });
  });

  it('words a refusal with the path and the reason', () => {
    expect(checkRevisePlan({ planVersion: 1, feedback: ' ' })).toEqual({
      ok: false,
      error: "input: feedback must not be empty (or give the steps' edits)",
    });
    expect(checkRevisePlan({ planVersion: 1, edits: [{ kind: 'setDependencies', stepId: 'a', dependsOn: ['x'.repeat(33)] }] })).toEqual({
      ok: false,
      error: 'edits.0.dependsOn.0: at most 32 characters',
    });
    expect(checkSteer({ kind: 'mustRead' })).toEqual({ ok: false, error: 'input: give at least one URL or collection' });
    expect(checkSteer({ kind: 'banDomains', domains: ['ok.com', 'a/b'] })).toEqual({
      ok: false,
      error: 'domains.1: a domain such as "example.com" (no scheme, port or path)',
    });
    expect(checkSteer({ kind: 'addStep', step: { ...step, id: 'C', extra: 1 } })).toEqual({
      ok: false,
      error: 'step: unrecognized key: extra; step.id: step id must be 1-32 lowercase letters, digits or "-"',
    });
  });
});
