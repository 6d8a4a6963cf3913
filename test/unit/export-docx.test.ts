// The Word export without a run: the layout of each Markdown block (read back by mammoth, a DOCX
// reader), the reference lists drawn from the report's data, a coder step's program (its label and
// its indentation), a report stored before reports were data, JPEG charts, and the picture sizes
// read from PNG and JPEG headers.
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { describe, expect, it } from 'vitest';
import { imageSize, reportDocx } from '../../src/api/export/docx';
import { legacyDoc, type ReportDoc } from '../../src/shared/report-doc';

/** The first bytes of a PNG of 1200x800: the signature and the IHDR chunk's width and height. */
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from([0, 0, 0x04, 0xb0, 0, 0, 0x03, 0x20, 8, 2, 0, 0, 0]),
]);
/** A JPEG's start of image, an APP0 segment, and a baseline frame header of 640x480. */
const jpeg = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xc0, 0, 17, 8, 0x01, 0xe0, 0x02, 0x80, 3, 1,
  0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9,
]);

describe('the Word export', () => {
  it('reads picture sizes from PNG and JPEG headers, and nothing from other bytes', () => {
    expect(imageSize(png)).toEqual({ width: 1200, height: 800 });
    expect(imageSize(jpeg)).toEqual({ width: 640, height: 480 });
    expect(imageSize(Buffer.from('GIF89a'))).toBeUndefined();
  });

  it('lays out lists, a quote, code and a JPEG chart, opens with the title, and links citations and addresses', async () => {
    const markdown = [
      'Costs fell [1] (see [the source](https://example.org/a?x=1&y=2)).',
      '',
      '1. first',
      '2. second',
      '   - nested point [1]',
      '',
      '> A note from the run [1].',
      '',
      '```',
      'print(1)',
      '```',
      '',
      '![cost chart](/v1/research/r/artifacts/c.jpg)',
    ].join('\n');
    const doc = reportDoc(
      'Costs',
      [{ heading: '', markdown }],
      [
        { n: 1, sourceId: 'S1', url: 'https://example.org/a?x=1&y=2', title: 'Source & more', cited: true },
        { n: 2, sourceId: 'S2', url: 'https://other.example/b', title: 'Read, not cited', cited: false },
      ],
    );
    const artifacts = new Map([['/v1/research/r/artifacts/c.jpg', { contentType: 'image/jpeg', bytes: jpeg }]]);
    const bytes = await reportDocx({ title: 'Costs', doc }, artifacts);
    const { value: html } = await mammoth.convertToHtml({ buffer: bytes });
    expect(html).toMatch(
      /^<h1>Costs<\/h1><p>Costs fell <a href="#ref_1">\[1\]<\/a> \(see <a href="https:\/\/example\.org\/a\?x=1&amp;y=2">the source<\/a>\)\.<\/p>/,
    );
    expect(html).toContain('<ol><li>first</li><li>second<ul><li>nested point <a href="#ref_1">[1]</a></li></ul></li></ol>');
    expect(html).toContain('<p><em>A note from the run </em><a href="#ref_1"><em>[1]</em></a><em>.</em></p>');
    expect(html).toContain('<p>print(1)</p>');
    expect(html).toMatch(/<img alt="cost chart" src="data:image\/jpeg;base64,\/9j\/4A/);
    // The references come from the data: the cited one bookmarked, with its address on a line of
    // its own; the consulted one listed after them, not a citation's target.
    expect(html).toContain(
      '<h2>References</h2><ol><li><a id="ref_1"></a><a href="https://example.org/a?x=1&amp;y=2">Source &amp; more</a><br />' +
        '<a href="https://example.org/a?x=1&amp;y=2">https://example.org/a?x=1&amp;y=2</a></li></ol>',
    );
    expect(html).toContain('<h2>Also consulted</h2><ul><li><a href="https://other.example/b">Read, not cited</a>');
    expect(html).not.toContain('ref_2');
  });

  it("labels a coder step's program with its summary and keeps its code's indentation", async () => {
    const program = ['def total(xs):', '    s = 0', '    for x in xs:', '        if x > 0:', '            s += x', '    return s'].join(
      '\n',
    );
    const markdown = `Summed [1].\n\n<details><summary>Program (ok)</summary>\n\n\`\`\`python\n${program}\n\`\`\`\n</details>`;
    const doc = reportDoc(
      'Sums',
      [{ heading: 'Analysis', markdown }],
      [{ n: 1, sourceId: 'S1', url: 'https://a.example', title: 'A', cited: true }],
    );
    const zip = await JSZip.loadAsync(await reportDocx({ title: 'Sums', doc }, new Map()));
    const xml = await zip.file('word/document.xml')!.async('string');
    const text = [...xml.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]!.replace(/&gt;/g, '>').replace(/&lt;/g, '<'));
    expect(text.join('|')).not.toMatch(/details|summary/);
    const label = text.indexOf('Program (ok)');
    expect(label).toBeGreaterThan(-1);
    // The label's run is bold, and the program's lines follow it, each with its leading spaces kept.
    expect(xml).toMatch(/<w:b\/>(?:(?!<w:r>)[\s\S])*<w:t(?: [^>]*)?>Program \(ok\)<\/w:t>/);
    expect(text.slice(label + 1, label + 7)).toEqual(program.split('\n'));
    expect(xml).toContain('<w:t xml:space="preserve">            s += x</w:t>');
  });

  it('exports a report stored before reports were data: its text as it was, its own list unlinked', async () => {
    const doc = legacyDoc('Old', '# Old\n\nCosts fell [1].\n\n## References\n\n1. [A](https://a.example)\n');
    const { value: html } = await mammoth.convertToHtml({ buffer: await reportDocx({ title: 'Old', doc }, new Map()) });
    expect(html).toBe('<h1>Old</h1><p>Costs fell [1].</p><h2>References</h2><ol><li><a href="https://a.example">A</a></li></ol>');
  });
});

function reportDoc(title: string, sections: ReportDoc['sections'], references: ReportDoc['references']): ReportDoc {
  return { title, notes: [], sections, charts: [], references };
}
