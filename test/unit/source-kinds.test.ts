// A reference to a source the run has only a search engine's snippet of says so, in the Markdown,
// the exports and to the reporter; every search provider is one kind or the other (issue 57).
import { describe, expect, it } from 'vitest';
import { referenceEntries } from '../../src/api/export/tokens';
import { SEARCH_PROVIDERS } from '../../src/infra/search/registry';
import { numberReferences, reporterInputs } from '../../src/shared/report';
import { reportMarkdown } from '../../src/shared/report-doc';
import { isSnippetOnly, SNIPPET_PROVIDERS, TEXT_PROVIDERS } from '../../src/shared/source-kinds';

describe('what a source is', () => {
  it('knows every search provider as a snippet or a text', () => {
    for (const p of SEARCH_PROVIDERS)
      expect([p.name, SNIPPET_PROVIDERS.has(p.name) !== TEXT_PROVIDERS.has(p.name)]).toEqual([p.name, true]);
    expect(isSnippetOnly('duckduckgo')).toBe(true);
    expect(isSnippetOnly('crawl')).toBe(false);
    expect(isSnippetOnly('wikipedia')).toBe(false);
  });

  it("labels a reference to a snippet in the Markdown, the exports and the reporter's list; a page read has no label", () => {
    const refs = numberReferences(
      ['S1', 'S2'],
      [
        { sourceId: 'S1', url: 'https://read.example/page', title: 'Read page', provider: 'crawl' },
        { sourceId: 'S2', url: 'https://blocked.example/redirect', title: 'Only a snippet', provider: 'duckduckgo' },
      ],
    );
    expect(refs).toEqual([
      { n: 1, sourceId: 'S1', url: 'https://read.example/page', title: 'Read page' },
      { n: 2, sourceId: 'S2', url: 'https://blocked.example/redirect', title: 'Only a snippet', snippet: true },
    ]);
    const doc = {
      title: 'T',
      notes: [],
      sections: [{ heading: '', markdown: 'A [1]. B [2].' }],
      charts: [],
      references: refs.map((r) => ({ ...r, cited: true })),
    };
    expect(reportMarkdown(doc)).toContain(
      '1. [Read page](https://read.example/page)\n2. [Only a snippet](https://blocked.example/redirect) (search result snippet; the page was not read)',
    );
    expect(referenceEntries(doc).cited.map((e) => e.title)).toEqual([
      'Read page',
      'Only a snippet (search result snippet; the page was not read)',
    ]);
    expect(reporterInputs([], refs).references).toBe(
      '[1] Read page — https://read.example/page\n[2] Only a snippet — https://blocked.example/redirect (search result snippet; the page was not read)',
    );
  });
});
