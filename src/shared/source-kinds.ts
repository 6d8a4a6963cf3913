// What a source's text is: the page itself as the run read it (a crawl), a document's or a paper's
// own text (the knowledge base, Wikipedia's extracts, the scholarly APIs' abstracts), or only a
// web search engine's snippet of a page the run never read. A reference to a snippet says so, so
// a reader can tell it from a page that was read (issue 57).

/** Providers whose hits carry a search engine's snippet of the page, not the page. */
export const SNIPPET_PROVIDERS: ReadonlySet<string> = new Set(['searxng', 'duckduckgo', 'brave', 'serper', 'tavily', 'exa']);

/** Providers whose text is the source's own: a page read, a document, an article's extract or abstract. */
export const TEXT_PROVIDERS: ReadonlySet<string> = new Set([
  'crawl',
  'knowledge',
  'session',
  'wikipedia',
  'openalex',
  'arxiv',
  'pubmed',
  'semanticscholar',
]);

/** True when all the run has of a source is a search engine's snippet. */
export const isSnippetOnly = (provider: string | undefined): boolean => provider !== undefined && SNIPPET_PROVIDERS.has(provider);

/** How a reference to a snippet is labelled after its title, in every format. */
export const SNIPPET_LABEL = 'search result snippet; the page was not read';

/** The line before the figures the crawler quotes from a page its reading left out
 *  (src/activities/crawl/index.ts); what follows it, one `- ` line each, is the page's own words. */
export const FIGURES_FROM_PAGE = 'Figures the page states (quoted from it):';

/** The figure lines a read page's stored text quotes after FIGURES_FROM_PAGE, without their marks. */
export function quotedFigures(content: string): string[] {
  const at = content.indexOf(FIGURES_FROM_PAGE);
  if (at < 0) return [];
  const lines = content.slice(at + FIGURES_FROM_PAGE.length).split('\n');
  const out: string[] = [];
  for (const line of lines.slice(1)) {
    const m = /^\s*-\s+(.+?)\s*$/.exec(line);
    if (!m) break;
    out.push(m[1]!);
  }
  return out;
}
