// Parsing and chunking of uploaded documents: each format detected and read with its structure
// (pages, headings, sheets, slides), bad files refused with the parser's reason, chunks that
// respect the token limit, overlap, keep the text as written and carry their place in the document.
import { describe, expect, it } from 'vitest';
import { chunkDocument, countTokens } from '../../src/activities/knowledge/chunk';
import {
  detectFormat,
  DocumentTooLarge,
  DocumentUnreadable,
  parseCsv,
  parseDocument,
  type ParsedDocument,
} from '../../src/activities/knowledge/parse';
import * as fx from '../support/kb-fixtures';

const parse = async (name: string, bytes: Buffer, contentType?: string) => {
  const format = detectFormat(name, contentType, bytes.subarray(0, 4096));
  if (!format) throw new Error(`${name}: format not detected`);
  return { format, doc: await parseDocument(bytes, format, name) };
};

describe('format detection', () => {
  it('knows Office files by their ZIP entries when the name does not say', async () => {
    for (const [make, format] of [
      [fx.makeDocx, 'docx'],
      [fx.makePptx, 'pptx'],
      [fx.makeXlsx, 'xlsx'],
    ] as const) {
      const head = (await make()).subarray(0, 4096);
      expect(detectFormat('upload', undefined, head)).toBe(format);
      expect(detectFormat('upload.bin', 'application/octet-stream', head)).toBe(format);
    }
  });

  it('goes by content type, then extension, for text formats', () => {
    const text = Buffer.from('# Title\n\nSome text.');
    expect(detectFormat('notes.md', 'text/plain', text)).toBe('markdown'); // what browsers send for .md
    expect(detectFormat('notes', 'text/markdown; charset=utf-8', text)).toBe('markdown');
    expect(detectFormat('data.txt', 'text/csv', text)).toBe('csv');
    expect(detectFormat('page.htm', undefined, text)).toBe('html');
    expect(detectFormat('readme.TXT', undefined, text)).toBe('text');
    expect(detectFormat('script.sh', undefined, text)).toBeUndefined();
  });

  it('refuses images, legacy Office, executables and files that are not what they claim', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    const ole = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]);
    expect(detectFormat('chart.png', 'image/png', png)).toBeUndefined();
    expect(detectFormat('chart.txt', 'text/plain', png)).toBeUndefined();
    expect(detectFormat('old.doc', 'application/msword', ole)).toBeUndefined();
    expect(detectFormat('old.xls', undefined, ole)).toBeUndefined();
    expect(detectFormat('tool.exe', undefined, Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0]))).toBeUndefined();
    expect(detectFormat('fake.pdf', 'application/pdf', Buffer.from('hello'))).toBeUndefined();
    expect(detectFormat('fake.docx', undefined, Buffer.from('hello'))).toBeUndefined();
  });
});

describe('document parsing', () => {
  it('reads a two-page PDF page by page, with its title', async () => {
    const { format, doc } = await parse('sheet.pdf', await fx.makePdf());
    expect(format).toBe('pdf');
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe(fx.PDF_FACTS.title);
    expect(doc.sections.map((s) => s.page)).toEqual([1, 2]);
    expect(doc.sections[0]!.text).toContain(fx.PDF_FACTS.page1);
    expect(doc.sections[1]!.text).toContain(fx.PDF_FACTS.page2);
    expect(doc.sections[0]!.text).not.toContain('78 percent');
  });

  it('refuses more pages than maxPages (a part of a document is not the document) and cuts text at maxChars', async () => {
    const pdf = await parseDocument(await fx.makePdf(), 'pdf', 'sheet.pdf', { maxPages: 1 }).catch((e: unknown) => e);
    expect(pdf).toBeInstanceOf(DocumentTooLarge);
    expect((pdf as Error).message).toBe('PDF: the file has 2 pages; at most 1 are parsed (KB_PARSE_MAX_PAGES)');
    const text = await parseDocument(Buffer.from('a'.repeat(500)), 'text', 'long.txt', { maxChars: 100 });
    expect(text.sections[0]!.text).toHaveLength(100);
  });

  it('reads a DOCX with its heading path, tables, line breaks and nested lists', async () => {
    const { format, doc } = await parse('handbook.docx', await fx.makeDocx());
    expect(format).toBe('docx');
    expect(doc.title).toBe('Grid Storage Handbook');
    const costs = doc.sections.find((s) => s.text.includes(fx.DOCX_FACTS.costs))!;
    expect(costs.headingPath).toEqual(fx.DOCX_FACTS.headings.costs);
    expect(costs.text).toContain(fx.DOCX_FACTS.table);
    const maintenance = doc.sections.find((s) => s.text.includes(fx.DOCX_FACTS.maintenance))!;
    expect(maintenance.headingPath).toEqual(fx.DOCX_FACTS.headings.maintenance);
    expect(maintenance.text).toContain(fx.DOCX_FACTS.shifts.join('\n'));
    expect(maintenance.text).toContain(`- ${fx.DOCX_FACTS.bullets[0]}\n  - ${fx.DOCX_FACTS.bullets[1]}`);
    expect(maintenance.text.split(fx.DOCX_FACTS.bullets[1]).length).toBe(2); // the nested item once, not again in its parent
  });

  it('reads a PPTX slide by slide: titles from placeholders or by convention, runs with their spaces, tables', async () => {
    const { format, doc } = await parse('deck.pptx', await fx.makePptx());
    expect(format).toBe('pptx');
    expect(doc.pages).toBe(2);
    expect(doc.sections.map((s) => [s.page, s.headingPath])).toEqual([
      [1, [fx.PPTX_FACTS.titles[0]]],
      [2, [fx.PPTX_FACTS.titles[1]]],
    ]);
    expect(doc.sections[0]!.text).toBe(fx.PPTX_FACTS.slide1);
    expect(doc.sections[1]!.text).toContain(fx.PPTX_FACTS.slide2);
    expect(doc.sections[1]!.text).toContain(fx.PPTX_FACTS.tableRow); // "300.50" kept as written, not read as a number
  });

  it('reads an XLSX sheet as rows under their headers', async () => {
    const { format, doc } = await parse('plants.xlsx', await fx.makeXlsx());
    expect(format).toBe('xlsx');
    expect(doc.title).toBe('plants');
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0]!.headingPath).toEqual([fx.XLSX_FACTS.sheet]);
    const lines = doc.sections[0]!.text.split('\n');
    expect(lines).toHaveLength(fx.XLSX_FACTS.rows.length);
    expect(lines.at(-1)).toBe(fx.XLSX_FACTS.rendered);
    for (const [plant, country, mw] of fx.XLSX_FACTS.rows)
      expect(lines.some((l) => l.includes(plant) && l.includes(country) && l.includes(String(mw)))).toBe(true);
  });

  it('reads CSV by RFC 4180, with the delimiter a spreadsheet chose', async () => {
    const { format, doc } = await parse('plants.csv', Buffer.from(fx.CSV_FIXTURE));
    expect(format).toBe('csv');
    expect(doc.sections[0]!.headingPath).toEqual(['plants.csv']);
    expect(doc.sections[0]!.text).toBe(
      'Plant: Lake Veyra; Country: Norland; Capacity, MW: 412\nPlant: Kestrel "KR" Ridge; Country: Ostmark; Capacity, MW: 260',
    );
    expect(parseCsv('a,"b\nc",d\r\n1,"say ""hi""",3\r\n\r\n')).toEqual([
      ['a', 'b\nc', 'd'],
      ['1', 'say "hi"', '3'],
    ]);
    expect(parseCsv('name;price\r\nTea;3,50\r\n')).toEqual([
      ['name', 'price'],
      ['Tea', '3,50'],
    ]);
    const bom = await parseDocument(Buffer.from('\ufeffname,price\nTea,3'), 'csv', 'p.csv');
    expect(bom.sections[0]!.text).toBe('name: Tea; price: 3');
  });

  it('reads HTML, Markdown and text with their headings', async () => {
    const html = await parse('p.html', Buffer.from(fx.HTML_FIXTURE));
    expect(html.format).toBe('html');
    expect(html.doc.title).toBe('Storage notes');
    expect(html.doc.sections[0]!.text).toMatch(/salt caverns/);
    const md = await parse('n.md', Buffer.from(fx.MARKDOWN_FIXTURE));
    expect(md.format).toBe('markdown');
    expect(md.doc.title).toBe('Notes');
    expect(md.doc.sections.map((s) => s.headingPath)).toEqual([['Notes'], ['Notes', 'Batteries', 'Sodium'], ['Notes', 'Hydro']]);
    const fenced = await parseDocument(
      Buffer.from('# Setup\n\n```sh\n# not a heading\nmake\n```\n\n## [Run](https://x.test) **fast**\n\nGo.'),
      'markdown',
      'f.md',
    );
    expect(fenced.sections.map((s) => s.headingPath)).toEqual([['Setup'], ['Setup', 'Run fast']]);
    expect(fenced.sections[0]!.text).toContain('# not a heading');
    const text = await parse('t.txt', Buffer.from(fx.TEXT_FIXTURE));
    expect(text.doc).toEqual({ title: 't', sections: [{ headingPath: [], text: fx.TEXT_FIXTURE }] });
  });

  it('leaves out what a database or a model should not get: NUL and other control characters', async () => {
    const doc = await parseDocument(Buffer.from('Tab\there, NUL\u0000 gone, bell\u0007 too.'), 'text', 'c.txt');
    expect(doc.sections[0]!.text).toBe('Tab\there, NUL gone, bell too.');
  });

  it('refuses corrupt and empty files with the reason', async () => {
    const docx = await parseDocument(fx.makeCorruptDocx(), 'docx', 'broken.docx').catch((e: unknown) => e);
    expect(docx).toBeInstanceOf(DocumentUnreadable);
    expect((docx as Error).message).toMatch(/^DOCX: \S/);
    await expect(parseDocument(fx.makeCorruptPdf(), 'pdf', 'broken.pdf')).rejects.toThrow(/^PDF: Invalid PDF structure/);
    await expect(parseDocument(fx.makeCorruptDocx(), 'pptx', 'broken.pptx')).rejects.toThrow(DocumentUnreadable);
    await expect(parseDocument(fx.makeCorruptDocx(), 'xlsx', 'broken.xlsx')).rejects.toThrow(DocumentUnreadable);
    await expect(parseDocument(Buffer.from('  \n\n '), 'text', 'empty.txt')).rejects.toThrow(/^TEXT: no text found/);
    await expect(parseDocument(Buffer.alloc(0), 'markdown', 'zero.md')).rejects.toThrow(/^MARKDOWN: the file is empty/);
  });
});

describe('chunking', () => {
  const sentences = Array.from({ length: 80 }, (_, i) => `Sentence number ${i} says something about storage plant ${i}.`);
  const long: ParsedDocument = { title: 'Long', sections: [{ headingPath: ['Long', 'Part'], page: 3, text: sentences.join(' ') }] };

  it('keeps chunks within the token limit, overlapping by whole sentences, with their place', () => {
    const chunks = chunkDocument(long, { maxTokens: 100, overlapTokens: 30 });
    expect(chunks.length).toBeGreaterThan(5);
    chunks.forEach((c, i) => {
      expect(c.seq).toBe(i);
      expect(c.tokens).toBe(countTokens(c.text));
      expect(c.tokens).toBeLessThanOrEqual(100);
      expect(c.headingPath).toEqual(['Long', 'Part']);
      expect(c.page).toBe(3);
      expect(c.text.trim()).toBe(c.text);
      expect(c.text).not.toBe('');
    });
    for (let i = 1; i < chunks.length; i++) {
      // The next chunk starts with whole sentences from the end of the previous one.
      const firstOfNext = chunks[i]!.text.split(/(?<=\.) /)[0]!;
      expect(sentences).toContain(firstOfNext);
      expect(chunks[i - 1]!.text.endsWith(firstOfNext) || chunks[i - 1]!.text.includes(`${firstOfNext} `)).toBe(true);
      const overlap = chunks[i - 1]!.text.slice(chunks[i - 1]!.text.indexOf(firstOfNext));
      expect(countTokens(overlap)).toBeLessThanOrEqual(30);
    }
    for (const s of sentences) expect(chunks.some((c) => c.text.includes(s))).toBe(true);
  });

  it('keeps the text as written: each chunk is a slice of the section, decimals and domains not cut', () => {
    const text = Array.from({ length: 40 }, (_, i) => `Unit ${i} stores 3.${i} MWh, see example.com/unit-${i} for details.`).join(' ');
    const chunks = chunkDocument({ title: '', sections: [{ headingPath: [], text }] }, { maxTokens: 60, overlapTokens: 15 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(text).toContain(c.text);
      expect(c.text).toMatch(/^Unit \d+ stores 3\.\d+ MWh/);
      expect(c.text).toMatch(/for details\.$/);
    }
  });

  it('ends a chunk at a paragraph rather than a sentence when one is in its second half', () => {
    const para = (p: string) => Array.from({ length: 6 }, (_, i) => `Paragraph ${p} sentence ${i} is here.`).join(' ');
    const text = [para('A'), para('B'), para('C')].join('\n\n');
    const [first] = chunkDocument({ title: '', sections: [{ headingPath: [], text }] }, { maxTokens: countTokens(para('A')) + 20 });
    expect(first!.text).toBe(para('A'));
  });

  it('keeps table rows whole and cuts a sentence longer than a chunk by tokens', () => {
    const rows = Array.from({ length: 60 }, (_, i) => `Plant: P${i}; Country: C${i}; Capacity MW: ${i * 7}`).join('\n');
    const table = chunkDocument({ title: '', sections: [{ headingPath: ['Plants'], text: rows }] }, { maxTokens: 80 });
    expect(table.length).toBeGreaterThan(3);
    for (const c of table) for (const line of c.text.split('\n')) expect(line).toMatch(/^Plant: P\d+; Country: C\d+; Capacity MW: \d+$/);
    const giant = 'word '.repeat(1_000).trim();
    const cut = chunkDocument({ title: '', sections: [{ headingPath: [], text: giant }] }, { maxTokens: 200 });
    expect(cut.length).toBeGreaterThanOrEqual(5);
    expect(cut.every((c) => c.tokens <= 200 && c.tokens > 0)).toBe(true);
    expect(cut.map((c) => c.text).join(' ')).toBe(giant);
  });

  it('handles what tokenizers choke on: long unbroken runs, special-token text, emoji', () => {
    const run = 'x'.repeat(20_000); // one pre-token: js-tiktoken's merge is quadratic in its length
    const chunks = chunkDocument({ title: '', sections: [{ headingPath: [], text: `Start. ${run} End.` }] }, { maxTokens: 100 });
    expect(chunks.every((c) => c.tokens <= 100)).toBe(true);
    expect(
      chunks
        .map((c) => c.text)
        .join('')
        .replace(/\s/g, ''),
    ).toBe(`Start.${run}End.`);
    expect(countTokens('Models end text with <|endoftext|> tokens.')).toBeGreaterThan(5);
    const emoji = '🙂🔋⚡'.repeat(300);
    const split = chunkDocument({ title: '', sections: [{ headingPath: [], text: emoji }] }, { maxTokens: 50 });
    expect(split.map((c) => c.text).join('')).toBe(emoji); // no half characters at the cuts
  });

  it('never mixes places, merges neighbours at the same place, and yields no empty chunks', () => {
    const chunks = chunkDocument({
      title: '',
      sections: [
        { headingPath: ['A'], page: 1, text: 'First part.' },
        { headingPath: ['A'], page: 1, text: 'Second part.' },
        { headingPath: ['A'], page: 2, text: 'Next page.' },
        { headingPath: ['B'], page: 2, text: '   \n\n ' },
        { headingPath: ['B'], page: 2, text: 'Other heading.' },
      ],
    });
    expect(chunks.map(({ seq, text, headingPath, page }) => ({ seq, text, headingPath, page }))).toEqual([
      { seq: 0, text: 'First part.\n\nSecond part.', headingPath: ['A'], page: 1 },
      { seq: 1, text: 'Next page.', headingPath: ['A'], page: 2 },
      { seq: 2, text: 'Other heading.', headingPath: ['B'], page: 2 },
    ]);
    expect(chunkDocument({ title: '', sections: [{ headingPath: [], text: ' \n ' }] })).toEqual([]);
  });

  it('is deterministic', () => {
    expect(chunkDocument(long, { maxTokens: 90 })).toEqual(chunkDocument(long, { maxTokens: 90 }));
  });
});
