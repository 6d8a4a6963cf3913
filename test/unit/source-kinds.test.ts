// A report cites only what the run read: a source the run has only a search engine's snippet of is
// not cited, and is listed under "Also consulted" with a label that says so, in the Markdown and the
// exports; every search provider is one kind or the other (issue 57).
import { describe, expect, it } from 'vitest';
import { referenceEntries } from '../../src/api/export/tokens';
import { SEARCH_PROVIDERS } from '../../src/infra/search/registry';
import { assembleReport, citable, groundDraft, numberReferences, reporterInputs, reportProblem } from '../../src/shared/report';
import { isSnippetOnly, SNIPPET_PROVIDERS, TEXT_PROVIDERS } from '../../src/shared/source-kinds';

describe('what a source is', () => {
  it('knows every search provider as a snippet or a text', () => {
    for (const p of SEARCH_PROVIDERS)
      expect([p.name, SNIPPET_PROVIDERS.has(p.name) !== TEXT_PROVIDERS.has(p.name)]).toEqual([p.name, true]);
    expect(isSnippetOnly('duckduckgo')).toBe(true);
    expect(isSnippetOnly('crawl')).toBe(false);
    expect(isSnippetOnly('wikipedia')).toBe(false);
  });

  const READ = 'S0000000a';
  const SNIPPET = 'S0000000b';
  const refs = numberReferences(
    [SNIPPET, READ],
    [
      { sourceId: READ, url: 'https://read.example/page', title: 'Read page', provider: 'crawl' },
      { sourceId: SNIPPET, url: 'https://blocked.example/redirect', title: 'Only a snippet', provider: 'duckduckgo' },
    ],
  );
  const findings = [
    { key: 'a', content: `A blocked page said so [${SNIPPET}]. The read page says more [${READ}].`, sourceIds: [SNIPPET, READ] },
  ];

  it('cites only pages the run read: a citation of a snippet, in any form, is removed and said, and the snippet listed under "Also consulted", labelled', () => {
    expect(refs).toEqual([
      { n: 1, sourceId: SNIPPET, url: 'https://blocked.example/redirect', title: 'Only a snippet', snippet: true },
      { n: 2, sourceId: READ, url: 'https://read.example/page', title: 'Read page' },
    ]);
    const draft = `## Findings\n\nA blocked page said so [1]. A [link to it](https://blocked.example/redirect) and its id (${SNIPPET}). The read page says more [2].`;
    const report = assembleReport({ researchId: 'r', title: 'T', draft, findings, refs, notes: [] });
    expect(report.body).toBe('## Findings\n\nA blocked page said so. A link to it and its id. The read page says more [1].');
    expect(report.references.map((r) => [r.n, r.title, r.cited])).toEqual([
      [1, 'Read page', true],
      [2, 'Only a snippet', false],
    ]);
    expect(report.markdown).toContain(
      '## Also consulted\n\n- [Only a snippet](https://blocked.example/redirect) (search result snippet; the page was not read)',
    );
    expect(referenceEntries(report.doc).consulted.map((e) => e.title)).toEqual([
      'Only a snippet (search result snippet; the page was not read)',
    ]);
    // Said once, in the notes at the end, not as a made-up id or an unknown number.
    expect(report.doc.notes.map((n) => n.text)).toEqual([
      'The run has only a search result snippet of 1 source the findings drew on (its page was not read): the report does not cite it, and "Also consulted" lists it, labelled.',
    ]);
    expect([report.removedIds, report.removedCitations, report.unresolved]).toEqual([[], [], 0]);
  });

  it('shows the reporter only the references it may cite, and calls a draft that cites nothing else uncited', () => {
    const inputs = reporterInputs(findings, refs);
    expect(inputs.references).toBe('[2] Read page — https://read.example/page');
    expect(inputs.findings).toContain('A blocked page said so. The read page says more [2].');
    const onlySnippet = groundDraft({ researchId: 'r', draft: 'A blocked page said so [1].', findings, refs });
    expect([onlySnippet.marks, onlySnippet.unresolved, onlySnippet.uncited]).toEqual([1, 0, 1]);
    expect(reportProblem({ draft: onlySnippet, findingsChars: 100, references: citable(refs).length, length: 'brief' })).toMatch(
      /cites none of the 1/,
    );
  });
});
