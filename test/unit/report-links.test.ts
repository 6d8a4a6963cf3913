// A source's URL and title come from the web: written into the reference list they stay one link
// with plain text, in the Markdown and in the HTML export rendered from it, whatever they hold.
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { reportHtml } from '../../src/api/export/html';
import { deckPlan } from '../../src/api/export/pptx';
import { linkDestination, markdownLink, markdownText } from '../../src/shared/markdown-link';
import { assembleReport, citationOrder, numberReferences } from '../../src/shared/report';

const HOSTILE_URL = 'https://evil.example/a) [click](https://phish.example/) <img src=x onerror=alert(1)> "q" \'s\'';
const HOSTILE_TITLE = 'Title](https://phish.example/) **bold** <script>alert(1)</script> ![i](https://track.example/p.png) &lt;';

function hostileReport() {
  const findings = [{ key: 'step/a/1', content: 'Prices fell [S00000001].', sourceIds: ['S00000001', 'S00000002'] }];
  const sources = [
    { sourceId: 'S00000001', url: HOSTILE_URL, title: HOSTILE_TITLE },
    { sourceId: 'S00000002', url: 'javascript:alert(1)//)', title: 'Other [x](https://phish.example/)' },
  ];
  const refs = numberReferences(citationOrder(findings), sources);
  return assembleReport({ researchId: 'research-links', title: 'Prices', draft: 'Prices fell [1].', findings, refs, notes: [] });
}

describe('links written into reports', () => {
  it('percent-encodes what could end a link destination, past the origin only, and refuses other schemes', () => {
    expect(linkDestination('https://a.example/x (1)/[y]?q="z"')).toBe(
      'https://a.example/x%20(1)/[y]?q=%22z%22'.replace('(', '%28').replace(')', '%29').replace('[', '%5B').replace(']', '%5D'),
    );
    expect(linkDestination('http://[::1]:8080/a)')).toBe('http://[::1]:8080/a%29');
    expect(linkDestination('javascript:alert(1)')).toBeUndefined();
    expect(linkDestination('not a url')).toBeUndefined();
    // A passage of the knowledge base is cited by its path on this service; another host is not.
    expect(linkDestination('/v1/collections/c1/documents/d1#chunk-3')).toBe('/v1/collections/c1/documents/d1#chunk-3');
    expect(linkDestination('/v1/a (b)')).toBe('/v1/a%20%28b%29');
    expect(linkDestination('//evil.example/x')).toBeUndefined();
    expect(linkDestination('/\\evil.example/x')).toBeUndefined();
    expect(markdownText('a *b* [c](d)\n<e>')).toBe('a \\*b\\* \\[c\\]\\(d\\) \\<e\\>');
    expect(markdownLink('', 'ftp://x.example/')).toBe('ftp\\://x.example/');
  });

  it('keeps a hostile source URL and title one link in References and the HTML export', () => {
    const r = hostileReport();
    const refsSection = r.markdown.slice(r.markdown.indexOf('## References'));
    // One Markdown link per entry in the References list, and nothing that opens another.
    const cited = refsSection.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(cited).toHaveLength(1);
    expect(cited[0]).toMatch(/^1\. \[[^\n]*\]\(https:\/\/evil\.example\/[^\s()<>"']*\)$/);

    const html = reportHtml({ title: r.title, doc: r.doc }, new Map());
    const doc = new JSDOM(html).window.document;
    const links = [...doc.querySelectorAll('a')].map((a) => a.getAttribute('href'));
    // The only links: the citation to its reference and the reference itself (with its encoded URL).
    expect(links.filter((h) => !h?.startsWith('#ref-'))).toEqual([linkDestination(HOSTILE_URL)]);
    expect(links.some((h) => h?.startsWith('https://phish.example'))).toBe(false);
    expect(doc.querySelectorAll('script, img, strong, em')).toHaveLength(0);
    const entry = doc.querySelector('#ref-1')!;
    // The title reads as it was given, as text.
    expect(entry.textContent).toContain('Title](https://phish.example/) **bold** <script>alert(1)</script>');
    expect(entry.textContent).toContain('&lt;');
    // A source whose URL is not http(s) is listed as text, no link.
    const consulted = [...doc.querySelectorAll('li')].find((li) => li.textContent?.includes('Other'));
    expect(consulted?.querySelector('a')).toBeNull();
    expect(consulted?.textContent).toBe('Other [x](https://phish.example/)');
  });

  it('gives the slide deck the title as it was given, one link to the encoded URL', () => {
    const r = hostileReport();
    const deck = deckPlan({ title: r.title, doc: r.doc }, { question: 'q', date: new Date(0) }, new Map());
    const refs = deck.find((s) => s.kind === 'references');
    expect(refs).toMatchObject({ kind: 'references', refs: [{ n: 1, url: linkDestination(HOSTILE_URL) }] });
    const title = refs?.kind === 'references' ? refs.refs[0]!.title : '';
    expect(title).toContain('Title](https://phish.example/) **bold** <script>alert(1)</script>');
    expect(title).not.toContain('\\');
  });
});
