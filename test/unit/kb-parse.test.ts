// Parsing and chunking of uploaded documents: each format detected and read with its structure
// (pages, headings, sheets, slides), bad files refused with the parser's reason, chunks that
// respect the token limit, overlap, and carry their place in the document.
import { describe, expect, it } from 'vitest';
import { chunkDocument, countTokens } from '../../src/activities/knowledge/chunk';
import { detectFormat, DocumentUnreadable, parseCsv, parseDocument } from '../../src/activities/knowledge/parse';
import * as fx from '../support/kb-fixtures';

const parse = async (name: string, bytes: Buffer) => {
  const format = detectFormat(name, undefined, bytes.subarray(0, 4096));
  if (!format) throw new Error(`${name}: format not detected`);
  return { format, doc: await parseDocument(bytes, format, name) };
};

describe('document parsing', () => {
  it('reads a two-page PDF page by page', async () => {
    const { format, doc } = await parse('sheet.pdf', await fx.makePdf());
    expect(format).toBe('pdf');
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe('Lake Veyra fact sheet');
    expect(doc.sections.find((s) => s.page === 1)!.text).toMatch(/412 megawatts/);
    expect(doc.sections.find((s) => s.page === 2)!.text).toMatch(/78 percent/);
  });

  it('reads a DOCX with its heading path and tables', async () => {
    const { format, doc } = await parse('h.docx', await fx.makeDocx());
    expect(format).toBe('docx');
    const costs = doc.sections.find((s) => s.text.includes('212 euros'))!;
    expect(costs.headingPath).toEqual(['Grid Storage Handbook', 'Costs']);
    expect(costs.text).toMatch(/Year \| EUR\/kWh\n2024 \| 212/);
    expect(doc.sections.find((s) => s.text.includes('90 days'))!.headingPath).toEqual(['Grid Storage Handbook', 'Maintenance']);
  });

  it('reads a PPTX slide by slide with titles', async () => {
    const { format, doc } = await parse('deck.pptx', await fx.makePptx());
    expect(format).toBe('pptx');
    expect(doc.sections.map((s) => [s.page, s.headingPath[0]])).toEqual([
      [1, 'Storage outlook'],
      [2, 'Next steps'],
    ]);
    expect(doc.sections[1]!.text).toMatch(/300 MWh/);
  });

  it('reads an XLSX sheet and a CSV as rows under their headers', async () => {
    const x = await parse('plants.xlsx', await fx.makeXlsx());
    expect(x.format).toBe('xlsx');
    expect(x.doc.sections[0]!.headingPath).toEqual(['Plants']);
    expect(x.doc.sections[0]!.text).toContain('Plant: Dunmore; Country: Westvale; Capacity MW: 1728');
    const c = await parse('plants.csv', Buffer.from(fx.CSV_FIXTURE));
    expect(c.doc.sections[0]!.text).toContain('Plant: Kestrel "KR" Ridge; Country: Ostmark; Capacity, MW: 260');
    expect(parseCsv('a,"b\nc",d\r\n1,2,3')).toEqual([
      ['a', 'b\nc', 'd'],
      ['1', '2', '3'],
    ]);
  });

  it('reads HTML, Markdown and text with their headings', async () => {
    const md = await parse('n.md', Buffer.from(fx.MARKDOWN_FIXTURE));
    expect(md.doc.sections.map((s) => s.headingPath)).toEqual([['Notes'], ['Notes', 'Batteries', 'Sodium'], ['Notes', 'Hydro']]);
    const html = await parse('p.html', Buffer.from(fx.HTML_FIXTURE));
    expect(html.doc.title).toBe('Storage notes');
    expect(html.doc.sections[0]!.text).toMatch(/salt caverns/);
    expect((await parse('t.txt', Buffer.from(fx.TEXT_FIXTURE))).doc.sections[0]!.text).toMatch(/Molten salt/);
  });

  it('refuses what it cannot read: images, legacy Office, corrupt files', async () => {
    expect(detectFormat('chart.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBeUndefined();
    expect(detectFormat('old.doc', 'application/msword', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))).toBeUndefined();
    expect(detectFormat('fake.pdf', 'application/pdf', Buffer.from('hello'))).toBeUndefined();
    await expect(parseDocument(fx.makeCorruptDocx(), 'docx', 'broken.docx')).rejects.toThrow(DocumentUnreadable);
    await expect(parseDocument(fx.makeCorruptPdf(), 'pdf', 'broken.pdf')).rejects.toThrow(/PDF: .*Invalid PDF/);
    await expect(parseDocument(Buffer.from('  \n\n '), 'text', 'empty.txt')).rejects.toThrow(/no text found/);
  });
});

describe('chunking', () => {
  const sentences = Array.from({ length: 80 }, (_, i) => `Sentence number ${i} says something about storage plant ${i}.`);
  const long = { title: 'Long', sections: [{ headingPath: ['Long', 'Part'], page: 3, text: sentences.join(' ') }] };

  it('keeps chunks within the token limit, overlapping by whole sentences, with their place', () => {
    const chunks = chunkDocument(long, { maxTokens: 100, overlapTokens: 30 });
    expect(chunks.length).toBeGreaterThan(5);
    chunks.forEach((c, i) => {
      expect(c.seq).toBe(i);
      expect(c.tokens).toBe(countTokens(c.text));
      expect(c.tokens).toBeLessThanOrEqual(105);
      expect(c.headingPath).toEqual(['Long', 'Part']);
      expect(c.page).toBe(3);
      expect(c.text.trim()).not.toBe('');
    });
    for (let i = 1; i < chunks.length; i++) {
      // The next chunk starts with the last sentence(s) of the previous one.
      const firstOfNext = chunks[i]!.text.split(/(?<=\.) /)[0]!;
      expect(chunks[i - 1]!.text.endsWith(firstOfNext) || chunks[i - 1]!.text.includes(`${firstOfNext} `)).toBe(true);
    }
    // Every sentence is somewhere.
    for (const s of sentences) expect(chunks.some((c) => c.text.includes(s))).toBe(true);
  });

  it('cuts a sentence longer than a chunk by tokens, and never mixes places', () => {
    const giant = 'word '.repeat(1_000).trim();
    const chunks = chunkDocument(
      {
        title: '',
        sections: [
          { headingPath: ['A'], text: giant },
          { headingPath: ['B'], text: 'Short.' },
        ],
      },
      { maxTokens: 200 },
    );
    expect(chunks.filter((c) => c.headingPath[0] === 'A').every((c) => c.tokens <= 200)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ headingPath: ['B'], text: 'Short.' });
  });

  it('is deterministic', () => {
    expect(chunkDocument(long, { maxTokens: 90 })).toEqual(chunkDocument(long, { maxTokens: 90 }));
  });
});
