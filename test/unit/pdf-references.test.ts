// The PDF export anchors each reference so a citation can link to it: only the report's own
// reference list gets the anchors, not a list inside a quote or a list item that happens to sit at
// the same index among its siblings as the reference list among the report's blocks.
import { describe, expect, it } from 'vitest';
import { reportContent } from '../../src/api/export/pdf';

const anchors = (content: unknown[]) => JSON.stringify(content).match(/"id":"ref-\d+"/g) ?? [];

describe('reference anchors in the PDF', () => {
  it('anchors every reference of the list after the References heading', () => {
    const md = 'Text [1] and [2].\n\n## References\n\n1. [A](https://a.example)\n2. [B](https://b.example)\n';
    expect(anchors(reportContent(md, new Map()))).toEqual(['"id":"ref-1"', '"id":"ref-2"']);
  });

  it('gives no anchor to a quoted list at the reference list index', () => {
    // Block 2 is the reference list; the quote's own block 2 is a list too.
    const md = '## References\n\n1. [A](https://a.example)\n\n> one\n>\n> - quoted item [1]\n';
    expect(anchors(reportContent(md, new Map()))).toEqual(['"id":"ref-1"']);
  });
});
