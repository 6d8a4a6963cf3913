// Small documents of every format the knowledge base reads, made in code (no binary fixtures in
// the repo), with facts the tests look for.
import { createRequire } from 'node:module';
import path from 'node:path';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import ExcelJS from 'exceljs';
import pdfmake from 'pdfmake';
import PptxGenJS from 'pptxgenjs';

export const PDF_FACTS = {
  title: 'Lake Veyra fact sheet',
  page1: 'The Lake Veyra pumped-storage plant has a capacity of 412 megawatts.',
  page2: 'Lake Veyra was commissioned in 2019 and reaches a round-trip efficiency of 78 percent.',
};
export const DOCX_FACTS = {
  costs: 'Lithium iron phosphate packs for the Ostmark grid cost 212 euros per kilowatt-hour in 2024.',
  maintenance: 'Inverters at the Ostmark site are inspected every 90 days.',
  headings: { costs: ['Grid Storage Handbook', 'Costs'], maintenance: ['Grid Storage Handbook', 'Maintenance'] },
  /** The table under "Costs", as the parser writes it. */
  table: 'Year | EUR/kWh\n2024 | 212',
  /** One paragraph with a line break between the two: they must not run together. */
  shifts: ['Night shift: control room', 'Day shift: site office'] as const,
  /** A bullet with a nested bullet: each once, the nested one indented. */
  bullets: ['Check coolant levels', 'Replace filters yearly'] as const,
};

const require = createRequire(import.meta.url);
const FONTS = path.join(path.dirname(require.resolve('pdfmake/package.json')), 'fonts', 'Roboto');
let fontsSet = false;

export async function makePdf(): Promise<Buffer> {
  if (!fontsSet) {
    pdfmake.setFonts({
      Roboto: {
        normal: path.join(FONTS, 'Roboto-Regular.ttf'),
        bold: path.join(FONTS, 'Roboto-Medium.ttf'),
        italics: path.join(FONTS, 'Roboto-Italic.ttf'),
        bolditalics: path.join(FONTS, 'Roboto-MediumItalic.ttf'),
      },
    });
    pdfmake.setUrlAccessPolicy(() => false);
    pdfmake.setLocalAccessPolicy((p: string) => path.resolve(p).startsWith(FONTS));
    fontsSet = true;
  }
  const doc = pdfmake.createPdf({
    info: { title: PDF_FACTS.title },
    content: [
      { text: 'Lake Veyra', fontSize: 18 },
      PDF_FACTS.page1,
      { text: 'Operations', fontSize: 18, pageBreak: 'before' },
      PDF_FACTS.page2,
    ],
  });
  return Buffer.from(await doc.getBuffer());
}

export async function makeDocx(): Promise<Buffer> {
  const cell = (t: string) => new TableCell({ children: [new Paragraph(t)] });
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Grid Storage Handbook', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ text: 'Costs', heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ children: [new TextRun(DOCX_FACTS.costs)] }),
          new Table({
            rows: [new TableRow({ children: [cell('Year'), cell('EUR/kWh')] }), new TableRow({ children: [cell('2024'), cell('212')] })],
          }),
          new Paragraph({ text: 'Maintenance', heading: HeadingLevel.HEADING_2 }),
          new Paragraph(DOCX_FACTS.maintenance),
          new Paragraph({ children: [new TextRun(DOCX_FACTS.shifts[0]), new TextRun({ text: DOCX_FACTS.shifts[1], break: 1 })] }),
          new Paragraph({ text: DOCX_FACTS.bullets[0], bullet: { level: 0 } }),
          new Paragraph({ text: DOCX_FACTS.bullets[1], bullet: { level: 1 } }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

export const PPTX_FACTS = {
  titles: ['Storage outlook', 'Next steps'] as const,
  /** Written as three runs (one bold): the spaces between runs must survive. */
  slide1: 'Flow batteries suit eight-hour shifting.',
  slide2: 'Tender 300 MWh of storage in the Ostmark region.',
  /** A table on slide 2, read as "a | b" rows. */
  tableRow: 'Ostmark | 300.50',
};

/** Slide 1 uses a layout's title placeholder; slide 2 is built from plain text boxes and a table
 *  (the title found by convention), as decks made by scripts often are. */
export async function makePptx(): Promise<Buffer> {
  const pptx = new PptxGenJS();
  pptx.defineSlideMaster({
    title: 'TITLED',
    objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.3, w: 9, h: 1 }, text: '' } }],
  });
  const one = pptx.addSlide({ masterName: 'TITLED' });
  one.addText(PPTX_FACTS.titles[0], { placeholder: 'title' });
  one.addText([{ text: 'Flow batteries suit ' }, { text: 'eight-hour', options: { bold: true } }, { text: ' shifting.' }], {
    x: 0.5,
    y: 1.5,
    w: 9,
    h: 1,
  });
  const two = pptx.addSlide();
  two.addText(PPTX_FACTS.titles[1], { x: 0.5, y: 0.3, w: 9, h: 1 });
  two.addText(PPTX_FACTS.slide2, { x: 0.5, y: 1.5, w: 9, h: 1 });
  two.addTable(
    [
      [{ text: 'Region' }, { text: 'Tender MWh' }],
      [{ text: 'Ostmark' }, { text: '300.50' }],
    ],
    { x: 0.5, y: 3, w: 9 },
  );
  return (await pptx.write({ outputType: 'nodebuffer' })) as Buffer;
}

export const XLSX_FACTS = {
  sheet: 'Plants',
  header: ['Plant', 'Country', 'Capacity MW'],
  rows: [
    ['Lake Veyra', 'Norland', 412],
    ['Kestrel Ridge', 'Ostmark', 260],
    ['Dunmore', 'Westvale', 1_728],
  ] as const,
  /** How the last row reads once parsed. */
  rendered: 'Plant: Dunmore; Country: Westvale; Capacity MW: 1728',
};

export async function makeXlsx(): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet(XLSX_FACTS.sheet);
  sheet.addRow([...XLSX_FACTS.header]);
  for (const row of XLSX_FACTS.rows) sheet.addRow([...row]);
  return Buffer.from(await book.xlsx.writeBuffer());
}

/** Quoted header with a comma, doubled quotes, CRLF line ends. */
export const CSV_FIXTURE = 'Plant,Country,"Capacity, MW"\r\nLake Veyra,Norland,412\r\n"Kestrel ""KR"" Ridge",Ostmark,260\r\n';
export const HTML_FIXTURE =
  '<html><head><title>Storage notes</title></head><body><article><h1>Storage notes</h1><h2>Siting</h2>' +
  '<p>Pumped hydro needs two reservoirs with a large height difference between them, which limits where it can be built.</p>' +
  '<p>Compressed air storage uses salt caverns, which are found only in some geological formations across Europe.</p></article></body></html>';
/** Nested headings; "Batteries" has no text of its own, so no section. */
export const MARKDOWN_FIXTURE =
  '# Notes\n\nIntro line about storage.\n\n## Batteries\n\n### Sodium\n\nSodium-ion cells avoid lithium and cobalt.\n\n## Hydro\n\nReservoirs store energy as height.\n';
export const TEXT_FIXTURE = 'Plain notes about thermal storage.\n\nMolten salt keeps heat for ten hours at concentrated solar plants.';

/** Starts like a ZIP (so it claims to be Office) but is not one. */
export function makeCorruptDocx(): Buffer {
  return Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from('word/document.xml this is not a zip archive at all')]);
}

/** A PDF header followed by garbage. */
export function makeCorruptPdf(): Buffer {
  return Buffer.from('%PDF-1.7\n garbage without objects or xref \n%%EOF');
}

/** Prose of made-up words from a fixed seed: the same text on every machine, with a long tail of
 *  words so that full-text indexing has real work. */
export function proseWriter(seed: number): (words: number) => string {
  const vocabulary = Array.from({ length: 4_000 }, (_, i) => `${['sol', 'ven', 'hyd', 'bat', 'gri', 'tur'][i % 6]}${i.toString(36)}`);
  let s = seed;
  const rand = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return (words) => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(vocabulary[Math.floor(vocabulary.length ** rand()) - 1]!);
    return `${out.join(' ')}.`;
  };
}

/** A Markdown document of about `bytes` bytes: chapters, sections and paragraphs of prose. */
export function makeLargeMarkdown(bytes: number, seed: number): Buffer {
  const prose = proseWriter(seed);
  const parts: string[] = [];
  let size = 0;
  for (let chapter = 1; size < bytes; chapter++) {
    parts.push(`# Chapter ${chapter}\n`);
    for (let section = 1; section <= 8 && size < bytes; section++) {
      parts.push(`## Section ${chapter}.${section}\n`);
      for (let p = 0; p < 6; p++) {
        const paragraph = `${prose(12)} ${prose(30)} ${prose(20)}\n`;
        parts.push(paragraph);
        size += paragraph.length;
      }
    }
  }
  return Buffer.from(parts.join('\n'));
}
