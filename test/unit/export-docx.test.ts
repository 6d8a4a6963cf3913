// The Word export without a run: the layout of each Markdown block (read back by mammoth, a DOCX
// reader), a report whose text does not open with its title, JPEG charts, and the picture sizes
// read from PNG and JPEG headers.
import mammoth from 'mammoth';
import { describe, expect, it } from 'vitest';
import { imageSize, reportDocx } from '../../src/api/export/docx';

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
      '',
      '## References',
      '',
      '1. [Source & more](https://example.org/a?x=1&y=2)',
    ].join('\n');
    const artifacts = new Map([['/v1/research/r/artifacts/c.jpg', { contentType: 'image/jpeg', bytes: jpeg }]]);
    const bytes = await reportDocx({ title: 'Costs', markdown }, artifacts);
    const { value: html } = await mammoth.convertToHtml({ buffer: bytes });
    expect(html).toMatch(
      /^<h1>Costs<\/h1><p>Costs fell <a href="#ref_1">\[1\]<\/a> \(see <a href="https:\/\/example\.org\/a\?x=1&amp;y=2">the source<\/a>\)\.<\/p>/,
    );
    expect(html).toContain('<ol><li>first</li><li>second<ul><li>nested point <a href="#ref_1">[1]</a></li></ul></li></ol>');
    expect(html).toContain('<p><em>A note from the run </em><a href="#ref_1"><em>[1]</em></a><em>.</em></p>');
    expect(html).toContain('<p>print(1)</p>');
    expect(html).toMatch(/<img alt="cost chart" src="data:image\/jpeg;base64,\/9j\/4A/);
    expect(html).toContain(
      '<h2>References</h2><ol><li><a id="ref_1"></a><a href="https://example.org/a?x=1&amp;y=2">Source &amp; more</a>',
    );
  });
});
