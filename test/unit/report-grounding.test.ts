// Report grounding by code: citations in every form a model writes become numbers 1..k in order of
// first citation, unknown ones go and are counted, the run's notes are grounded the same way, and a
// draft that is no report worth the name is found and replaced by a report code puts together.
import { describe, expect, it } from 'vitest';
import { groundedWords } from '../../src/activities/roles/changes';
import { groundCitations, renumberCitations, type RemovedLink } from '../../src/shared/citations';
import {
  assembleReport,
  withoutPromptTags,
  withoutReferenceList,
  LISTED_BY_CODE,
  citationOrder,
  findingsChars,
  groundDraft,
  numberReferences,
  reportFromFindings,
  reportProblem,
  type Finding,
} from '../../src/shared/report';

const A = 'Sf7c0ba1b';
const B = 'S1234abcd';
const sources = [
  { sourceId: A, url: 'https://a.example/solar', title: 'Solar costs' },
  { sourceId: B, url: 'https://b.example/wind', title: 'Wind costs' },
];
const findings: Finding[] = [
  { key: 'background', content: `Wind got cheaper [${B}].`, sourceIds: [B] },
  { key: 'step/a/1', content: `Solar LCOE fell 89% [${A}].`, sourceIds: [A], summary: 'Solar costs since 2010.', meta: { stepId: 'a' } },
];
// Shown numbering: B is [1] (the background cites it first), A is [2].
const refs = numberReferences(citationOrder(findings), sources);

describe('groundCitations', () => {
  it('turns every form of citation of a known source into [n] and removes the unknown ones, counting them', () => {
    const text = [
      `Ids [${A}], both [${B}, ${A}], parens (${B}), bare ${A} and [Source: ${B}].`,
      `Footnotes[^1] and [^${A}] and [^x].`,
      `Links [the study](https://a.example/solar/) and https://b.example/wind, made up [S0f93beef] and [7].`,
      `Backticks \`[${A}]\` and a slash [${A}/${B}] cite too; other code stays: \`x = 1\`.`,
      '```',
      `print("${B}")`,
      '```',
      '',
      `[^1]: Wind costs, https://b.example/wind`,
      `[^x]: A book nobody retrieved, https://fabricated.example/x`,
    ].join('\n');
    const g = groundCitations(text, refs);
    expect(g.markdown.trimEnd()).toBe(
      [
        'Ids [2], both [1][2], parens [1], bare [2] and [1].',
        'Footnotes[1] and [2] and.',
        'Links the study [2] and [1], made up and.',
        'Backticks [2] and a slash [2][1] cite too; other code stays: `x = 1`.',
        // No source id is code: one in a code block is taken out, counted as removed.
        '```',
        'print("")',
        '```',
      ].join('\n'),
    );
    expect(g.removedIds).toEqual([B, 'S0f93beef']);
    expect(g.removedNumbers).toEqual([7]);
    expect(g.unresolved).toBe(4);
    expect(g.marks).toBe(17);
    expect(g.removedLinks).toEqual([{ url: 'https://fabricated.example/x', reason: 'footnote to an address the run did not retrieve' }]);
  });

  it('closes the gaps a removal leaves: no space before punctuation, no empty parentheses, no space at a line start', () => {
    const g = groundCitations('[S0f93beef] Solar fell.\n- [9] Wind too, see (S0f93beef), and (https://made-up.example/x).', refs);
    expect(g.markdown).toBe('Solar fell.\n- Wind too, see, and.');
    expect(g).toMatchObject({ marks: 3, unresolved: 3, removedNumbers: [9], removedIds: ['S0f93beef'] });
  });

  it('renumbers in order of first citation and puts the uncited sources after the cited ones', () => {
    const r = renumberCitations('First [2], then [1], again [2]; `[1]` in code.', refs);
    expect(r.markdown).toBe('First [1], then [2], again [1]; `[1]` in code.');
    expect(r.sources.map((s) => [s.sourceId, s.n, s.cited])).toEqual([
      [A, 1, true],
      [B, 2, true],
    ]);
    expect(renumberCitations('Only [2].', refs).sources.map((s) => [s.sourceId, s.n, s.cited])).toEqual([
      [A, 1, true],
      [B, 2, false],
    ]);
  });
});

describe('assembleReport with what real models write', () => {
  it('numbers [S…] ids 1..k, removes a made-up id and URL, and grounds the notes', () => {
    const draft = `## Solar\n\nSolar LCOE fell 89% [${A}]; a rumour says more [S0f93beef] (see https://fabricated.example/y).`;
    const notes = [`Gap reflection 1: wind unclear [Sf7c0beef] (https://fabricated.example/x); solar covered [${A}].`];
    const r = assembleReport({ researchId: 'r', title: `Energy [${A}]`, draft, findings, refs, notes });
    // The only cited source is number 1 (it was [2] in the list the model was shown), under References.
    expect(r.body).toBe('## Solar\n\nSolar LCOE fell 89% [1]; a rumour says more (see).');
    expect(r.markdown).toContain('## References\n\n1. [Solar costs](https://a.example/solar)\n');
    expect(r.markdown).toContain('## Also consulted\n\n- [Wind costs](https://b.example/wind)');
    expect(r.markdown).not.toMatch(/\n2\. |fabricated|S0f93beef|Sf7c0beef|\[S[0-9a-f]{8}\]/);
    expect(r.title).toBe('Energy');
    expect(r.markdown).toContain('> Gap reflection 1: wind unclear; solar covered [1].');
    expect(r.references.map((x) => [x.n, x.sourceId, x.cited])).toEqual([
      [1, A, true],
      [2, B, false],
    ]);
    expect(r.removedIds).toEqual(['S0f93beef', 'Sf7c0beef']);
    expect(r.removedLinks.map((l) => l.url)).toEqual(['https://fabricated.example/y', 'https://fabricated.example/x']);
    expect(r.unresolved).toBe(2);
    expect(r.markdown).toContain('> Removed the citations of 2 source ids naming no source of this run.');
  });

  it('says so when the report cites none of the sources the research retrieved', () => {
    const r = assembleReport({ researchId: 'r', title: 'T', draft: 'Nothing cited here.', findings, refs, notes: [] });
    expect(r.markdown).toContain('> The report cites none of the 2 sources the research retrieved');
    expect(r.markdown).not.toContain('## References');
    const cited = assembleReport({ researchId: 'r', title: 'T', draft: 'Cited [1].', findings, refs, notes: [] });
    expect(cited.markdown).not.toContain('cites none');
  });
});

describe('reportProblem', () => {
  const long: Finding[] = [
    { key: 'background', content: `Background. ${'Wind and solar costs fell. '.repeat(60)} [${B}]`, sourceIds: [B] },
    { key: 'step/a/1', content: `Step. ${'Solar LCOE fell 89% since 2010. '.repeat(80)} [${A}]`, sourceIds: [A] },
  ];
  const longRefs = numberReferences(citationOrder(long), sources);
  const check = (draft: string, length: 'brief' | 'standard' = 'standard') =>
    reportProblem({
      draft: groundDraft({ researchId: 'r', draft, findings: long, refs: longRefs }),
      findingsChars: findingsChars(long),
      references: longRefs.length,
      length,
    });
  const paragraph = 'Solar costs fell by 89% between 2010 and 2022 while wind fell by about half [1][2]. '.repeat(12);

  it('refuses a one-sentence report for findings of thousands of characters', () => {
    expect(findingsChars(long)).toBeGreaterThan(4000);
    expect(check('Solar got much cheaper [1].')).toMatch(/too short for findings of \d+ characters/);
  });

  it('refuses an uncited report when the findings cite sources, and one without sections', () => {
    expect(check(`## Overview\n\n${paragraph.replace(/\[\d\]/g, '')}\n\n## Detail\n\nMore.`)).toMatch(/cites none of the 2/);
    expect(check(`## Overview\n\n${paragraph}\n\n## Detail\n\nMore [2].`)).toBeUndefined();
    expect(check(paragraph)).toMatch(/no section heading/);
    // Made-up ids and numbers are no citation.
    expect(check(`## A\n\n${paragraph.replace(/\[1\]\[2\]/g, '[S0f93beef][9]')}\n\n## B\n\nx`)).toMatch(/cites none/);
    // A brief report needs no sections.
    expect(check(paragraph, 'brief')).toBeUndefined();
  });

  it('accepts a short report for short findings', () => {
    const problem = reportProblem({
      draft: groundDraft({ researchId: 'r', draft: 'Costs fell [1].', findings, refs }),
      findingsChars: findingsChars(findings),
      references: refs.length,
      length: 'standard',
    });
    expect(problem).toBeUndefined();
  });
});

describe('reportFromFindings', () => {
  it('writes a title from the question, an overview and one section per finding, cited by number', () => {
    const made = reportFromFindings({
      question: 'How far did\nsolar costs fall?',
      findings,
      refs,
      reason: 'the model gave no usable answer',
    });
    expect(made.title).toBe('How far did solar costs fall?');
    const r = assembleReport({ researchId: 'r', title: made.title, draft: made.draft, findings, refs, notes: [] });
    expect(r.markdown).toContain('## Overview\n\nThis report was put together by code from the research findings');
    expect(r.markdown).toContain('the findings of 1 research step as');
    expect(r.markdown).toContain('## Background\n\nWind got cheaper [1].');
    expect(r.markdown).toContain('## Solar costs since 2010\n\nSolar LCOE fell 89% [2].');
    expect(r.markdown).toContain('## References\n\n1. [Wind costs](https://b.example/wind)\n2. [Solar costs](https://a.example/solar)\n');
    expect(
      reportProblem({
        draft: groundDraft({ researchId: 'r', draft: made.draft, findings, refs }),
        findingsChars: 60,
        references: 2,
        length: 'standard',
      }),
    ).toBeUndefined();
  });

  it("heads a step's section with its plan title when the findings keep it, the summary's first sentence otherwise", () => {
    const titled: Finding[] = [
      ...findings,
      {
        key: 'step/b/1',
        content: `Wind fell too [${B}].`,
        sourceIds: [B],
        summary: 'The program failed to compute the input file due to its syntax errors.',
        meta: { stepId: 'b', stepTitle: 'Wind\ncost  decline' },
      },
      { key: 'step/c/1', content: 'Nothing.', sourceIds: [], summary: `${'A very long summary '.repeat(8)}.`, meta: { stepId: 'c' } },
    ];
    const { draft } = reportFromFindings({ question: 'q', findings: titled, refs, reason: 'none' });
    expect(draft.match(/^## .*/gm)).toEqual([
      '## Overview',
      '## Background',
      '## Solar costs since 2010',
      '## Wind cost decline',
      '## Research step c',
    ]);
  });
});

describe('"What changed" words', () => {
  it('are published without citations or links of their own, and what they pointed at is recorded', () => {
    const removed: RemovedLink[] = [];
    const g = groundedWords(`Solar LCOE [${A}] fell\n91% [3] [S0f93beef] per [IEA](https://made-up.example/iea).`, refs, removed);
    // The known source is cited by the section's own number; the made-up ones count as unresolved.
    expect(g).toEqual({ text: 'Solar LCOE fell 91% per IEA.', unresolved: 2 });
    expect(removed).toEqual([{ url: 'https://made-up.example/iea', reason: 'link to an address the run did not retrieve' }]);
  });
});

describe('a reference list the model wrote itself', () => {
  it('is dropped under a name that is no heading, blank lines before and between its entries included', () => {
    const draft = 'Solar fell 89% [1].\n\nReferences\n\n[1] Solar costs — https://a.example/solar\n\n[2] Wind costs — [2]\n\nMore to come.';
    expect(withoutReferenceList(draft)).toBe('Solar fell 89% [1].\n\nMore to come.');
  });

  it('is dropped: code writes the list, and numbers in it are no citations', () => {
    const draft =
      '## Key points\n\nSolar fell 89% [1].\n\n## References\n\n[1] Solar costs — [1]\n[2] Battery prices — [2]\n\n### Notes\n\nstill the list\n\n## Outlook\n\nMore to come.';
    expect(withoutReferenceList(draft)).toBe('## Key points\n\nSolar fell 89% [1].\n\n## Outlook\n\nMore to come.');
    expect(withoutReferenceList('Text.\n\n**Sources:**\n- a')).toBe('Text.\n\n**Sources:**\n- a');
    expect(withoutReferenceList('# Title\n\n## Quellen\n[1] x')).toBe('# Title');
    // A list under a name on a line of its own, as a small model copied one, when numbered like the report's.
    expect(withoutReferenceList('Solar fell [1].\n\nReferences\n[1] Solar costs — [1]\n[2] x\n\nMore text.')).toBe(
      'Solar fell [1].\n\nMore text.',
    );
    expect(withoutReferenceList('Solar fell [1].\n\n**Sources:**\n[1] Solar costs')).toBe('Solar fell [1].');
    // The word alone, or before text that is no numbered entry, stays.
    expect(withoutReferenceList('Sources\nare many [1].')).toBe('Sources\nare many [1].');
  });
});

describe('what a small model copies from its prompt', () => {
  it("drops the prompt's tags and an echoed reference block, keeps the text, removes misshapen ids", () => {
    const draft =
      '## Analysis\n\n<finding key="step/a/1">\nPrices fell [1] and [Se0a1644e9].\n</finding>\n<references>[1] Solar — [1]\n[2] Batteries — [2]\n\n## Outlook\n\nMore.';
    const cleaned = withoutPromptTags(draft);
    expect(cleaned).toBe('## Analysis\n\nPrices fell [1] and [Se0a1644e9].\n\n## Outlook\n\nMore.');
    const g = groundCitations(cleaned, [{ n: 1, sourceId: 'S1a2b3c4d', url: 'http://site.test/a' }]);
    expect(g.markdown).toContain('Prices fell [1] and.');
    expect(g.unresolved).toBe(1);
    expect(g.removedIds).toEqual(['Se0a1644e9']);
  });

  it("drops code's label before evidence it listed, copied with the evidence, and keeps the evidence", () => {
    const draft = `The alloy is light.\n\n${LISTED_BY_CODE}\n- **Datasheet**: Tensile strength: 610 MPa.\n\n**${LISTED_BY_CODE}**\n- **Overview**: It is light.`;
    expect(withoutPromptTags(draft)).toBe(
      'The alloy is light.\n\n- **Datasheet**: Tensile strength: 610 MPa.\n\n- **Overview**: It is light.',
    );
    // A sentence that works the label in (as a small model's summary did) goes; the others stay.
    expect(
      withoutPromptTags(
        'It has 440 trams. Evidence retrieved (listed by code, as the text above cites no source) supports this information.',
      ),
    ).toBe('It has 440 trams.');
    expect(withoutPromptTags('Evidence was retrieved and listed by code.')).toBe('Evidence was retrieved and listed by code.');
  });
});
