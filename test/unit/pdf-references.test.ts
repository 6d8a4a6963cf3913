// The PDF export draws the reference lists from the report's data: each cited reference is a
// destination its citations link to, with its address printed in full; a list in the text, even
// one under a "References" heading the text writes itself, is only a list. A coder step's program
// (a collapsible part in the Markdown) is drawn as its label and its code, indentation kept.
import { describe, expect, it } from 'vitest';
import { reportContent } from '../../src/api/export/pdf';
import { legacyDoc, type ReportDoc } from '../../src/shared/report-doc';

const anchors = (content: unknown[]) => JSON.stringify(content).match(/"id":"ref-\d+"/g) ?? [];

/** Every node of a pdfmake content tree that has a `text`. */
function textNodes(content: unknown): Record<string, unknown>[] {
  if (Array.isArray(content)) return content.flatMap(textNodes);
  if (!content || typeof content !== 'object') return [];
  const node = content as Record<string, unknown>;
  return [...('text' in node ? [node] : []), ...Object.values(node).flatMap(textNodes)];
}
/** The text a content tree shows, its pieces joined. */
const shown = (content: unknown) =>
  textNodes(content)
    .map((n) => n.text)
    .filter((t): t is string => typeof t === 'string')
    .join('|');

function doc(sections: ReportDoc['sections'], references: ReportDoc['references'] = []): ReportDoc {
  return { title: 'Report', notes: [], sections, charts: [], references };
}

const refs: ReportDoc['references'] = [
  { n: 1, sourceId: 'S1', url: 'https://a.example/x?y=1', title: 'A', cited: true },
  { n: 2, sourceId: 'S2', url: 'https://b.example', title: 'B', cited: true },
  { n: 3, sourceId: 'S3', url: 'https://c.example', title: 'Consulted only', cited: false },
];

describe('reference anchors in the PDF', () => {
  it('anchors every cited reference, links the citations to them and prints each address in full', () => {
    const content = reportContent(doc([{ heading: 'Findings', markdown: 'Text [1] and [2], not [3].' }], refs), new Map());
    expect(anchors(content)).toEqual(['"id":"ref-1"', '"id":"ref-2"']);
    const nodes = textNodes(content);
    expect(nodes.filter((n) => n.linkToDestination).map((n) => [n.text, n.linkToDestination])).toEqual([
      ['[1]', 'ref-1'],
      ['[2]', 'ref-2'],
    ]);
    // Each entry: its title, then its address on a line of its own, both linked.
    expect(nodes).toContainEqual(expect.objectContaining({ text: 'A', link: 'https://a.example/x?y=1' }));
    expect(nodes).toContainEqual(expect.objectContaining({ text: '\nhttps://a.example/x?y=1', link: 'https://a.example/x?y=1' }));
    // The consulted source is listed under its own heading, after the references, with no anchor.
    expect(shown(content)).toMatch(
      /References\|A\|\nhttps:\/\/a\.example\/x\?y=1\|B\|\nhttps:\/\/b\.example\/\|Also consulted\|Consulted only\|\nhttps:\/\/c\.example\/$/,
    );
  });

  it('gives no anchor to a list of the text, quoted or under a "References" heading of its own', () => {
    const markdown = '## References\n\n1. [A](https://a.example)\n\n> one\n>\n> 1. quoted item [1]\n';
    expect(anchors(reportContent(doc([{ heading: '', markdown }]), new Map()))).toEqual([]);
    const withData = reportContent(doc([{ heading: 'Notes', markdown }], refs.slice(0, 1)), new Map());
    expect(anchors(withData)).toEqual(['"id":"ref-1"']);
  });

  it('exports a report stored before reports were data as its text, no anchors', () => {
    const old = legacyDoc('Old', '# Old\n\nCosts fell [1].\n\n## References\n\n1. [A](https://a.example)\n');
    const content = reportContent(old, new Map());
    expect(anchors(content)).toEqual([]);
    expect(shown(content)).toBe('Old|Costs fell [1].|References|A');
    expect(textNodes(content).some((n) => n.linkToDestination)).toBe(false);
  });
});

describe("a coder step's program in the PDF", () => {
  const program = ['def total(xs):', '    s = 0', '    for x in xs:', '        if x > 0:', '\t\t\ts += x', '    return s'].join('\n');
  const markdown = `Summed.\n\n<details><summary>Program (ok)</summary>\n\n\`\`\`python\n${program}\n\`\`\`\n</details>\n\nAfter <b>it</b>.`;
  const content = reportContent(doc([{ heading: 'Analysis', markdown }]), new Map());

  it('is its summary as a bold label, then its code; no tag is printed', () => {
    const text = shown(content);
    expect(text).not.toMatch(/<\/?(details|summary|b)>/);
    expect(textNodes(content)).toContainEqual(expect.objectContaining({ text: 'Program (ok)', bold: true }));
    expect(text).toMatch(/Summed\.\|Program \(ok\)\|def total\(xs\):\n/);
  });

  it('keeps its indentation (tabs widened to spaces) in a monospace font', () => {
    const code = textNodes(content).find((n) => typeof n.text === 'string' && n.text.startsWith('def total'))!;
    expect(code).toMatchObject({ preserveLeadingSpaces: true, font: 'Courier' });
    expect(code.text).toContain('\n    return s');
    expect(code.text).toContain('\n        if x > 0:\n            s += x\n');
  });

  it('is set in Roboto when the code holds characters the standard font cannot draw, indentation kept', () => {
    const cjk = reportContent(doc([{ heading: 'A', markdown: '```python\nif x:\n    print("合計")\n```' }]), new Map());
    const code = textNodes(cjk).find((n) => typeof n.text === 'string' && n.text.startsWith('if x'))!;
    expect(code.preserveLeadingSpaces).toBe(true);
    expect(code.font).toBeUndefined();
  });
});
