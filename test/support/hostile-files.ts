// Hostile documents made in code, small on disk: Office files whose entries inflate far beyond
// what they declare (zip bombs), PDFs whose pages share one large stream or that have too many
// pages, a CSV with a million columns, a dense DOCX that fits the inflate cap but not a parser's
// memory. Each is a valid file as far as its format goes, so only the caps stop it.
import { constants, crc32, deflateRawSync, deflateSync } from 'node:zlib';

interface ZipSource {
  name: string;
  /** The entry's bytes, or a piece repeated `times` times (streamed: never held whole). */
  data: Buffer | { piece: Buffer; times: number };
  /** The uncompressed size the ZIP declares (a bomb lies); the real one by default. */
  declare?: number;
}

/** A ZIP of deflated entries, each declaring the size given (or its real one). */
export async function makeZip(sources: ZipSource[]): Promise<Buffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const src of sources) {
    const { deflated, size, crc } = Buffer.isBuffer(src.data)
      ? { deflated: deflateRawSync(src.data), size: src.data.length, crc: crc32(src.data) }
      : deflateRepeated(src.data.piece, src.data.times);
    const declared = src.declare ?? size;
    const name = Buffer.from(src.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(Math.min(declared, 0xfffffffe), 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(deflated.length, 20);
    central.writeUInt32LE(Math.min(declared, 0xfffffffe), 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, deflated);
    centrals.push(central, name);
    offset += local.length + name.length + deflated.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(sources.length, 8);
  end.writeUInt16LE(sources.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** About how much of a repeated piece is deflated at once (see deflateRepeated). */
const BLOCK_BYTES = 1 << 20;

/**
 * `piece` repeated `times` times, deflated without being held or deflated whole: a megabyte of it
 * is deflated once, flushed so that its bytes end on a byte boundary and refer to nothing before
 * them, and those bytes repeated (then the rest, then the final block). The stream inflates to the
 * same bytes as the whole deflated at once; a bomb of hundreds of MB is made in milliseconds.
 */
function deflateRepeated(piece: Buffer, times: number): { deflated: Buffer; size: number; crc: number } {
  const perBlock = Math.max(1, Math.min(times, Math.floor(BLOCK_BYTES / piece.length)));
  const repeated = (n: number) => Buffer.concat(Array.from({ length: n }, () => piece));
  const flushed = (data: Buffer) => deflateRawSync(data, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const block = repeated(perBlock);
  const blocks = Math.floor(times / perBlock);
  const rest = repeated(times % perBlock);
  let crc = 0;
  for (let i = 0; i < blocks; i++) crc = crc32(block, crc);
  crc = crc32(rest, crc);
  const deflatedBlock = flushed(block);
  const deflated = Buffer.concat([
    ...Array.from({ length: blocks }, () => deflatedBlock),
    ...(rest.length ? [flushed(rest)] : []),
    deflateRawSync(Buffer.alloc(0)), // the final block, empty
  ]);
  return { deflated, size: piece.length * times, crc };
}

const CONTENT_TYPES = (part: string, type: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
  `<Default Extension="xml" ContentType="application/xml"/><Override PartName="/${part}" ContentType="${type}"/></Types>`;
const RELS = (target: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="${target}"/></Relationships>`;
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const PARAGRAPH = Buffer.from('<w:p><w:r><w:t>Pumped hydro stores energy as height.</w:t></w:r></w:p>'.repeat(64));

/**
 * A DOCX whose document.xml inflates to `megabytes` MB of paragraphs while the ZIP declares a few
 * kilobytes (the declared sizes lie; only counting the inflater's output finds it).
 */
export function makeDocxBomb(megabytes: number): Promise<Buffer> {
  const times = Math.ceil((megabytes * 1e6) / PARAGRAPH.length);
  return makeZip([
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        CONTENT_TYPES('word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'),
      ),
    },
    { name: '_rels/.rels', data: Buffer.from(RELS('word/document.xml')) },
    { name: 'word/document.xml', data: { piece: PARAGRAPH, times }, declare: 4_096 },
  ]);
}

/** A DOCX of `paragraphs` short paragraphs: modest inflated, but mammoth and a DOM need far more memory. */
export function makeDenseDocx(paragraphs: number): Promise<Buffer> {
  const body = '<w:p><w:r><w:t>x</w:t></w:r></w:p>'.repeat(paragraphs);
  return makeZip([
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        CONTENT_TYPES('word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'),
      ),
    },
    { name: '_rels/.rels', data: Buffer.from(RELS('word/document.xml')) },
    { name: 'word/document.xml', data: Buffer.from(`<?xml version="1.0"?><w:document ${W}><w:body>${body}</w:body></w:document>`) },
  ]);
}

/** A PPTX with one honest slide and a media entry that inflates to `megabytes` MB (declared as it is). */
export function makePptxBomb(megabytes: number): Promise<Buffer> {
  const slide =
    '<?xml version="1.0"?><p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">' +
    '<p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Storage</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>';
  return makeZip([
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        CONTENT_TYPES('ppt/presentation.xml', 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml'),
      ),
    },
    { name: 'ppt/slides/slide1.xml', data: Buffer.from(slide) },
    { name: 'ppt/media/image1.bin', data: { piece: Buffer.alloc(1 << 20), times: megabytes } },
  ]);
}

/** An XLSX whose one worksheet inflates to `megabytes` MB of rows while declaring 2 KB. */
export function makeXlsxBomb(megabytes: number): Promise<Buffer> {
  const row = Buffer.from('<row><c t="inlineStr"><is><t>Veyra</t></is></c></row>'.repeat(256));
  return makeZip([
    {
      name: '[Content_Types].xml',
      data: Buffer.from(CONTENT_TYPES('xl/workbook.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml')),
    },
    { name: 'xl/worksheets/sheet1.xml', data: { piece: row, times: Math.ceil((megabytes * 1e6) / row.length) }, declare: 2_048 },
  ]);
}

/** A CSV with one header row of `columns` columns and one data row (2 bytes a cell). */
export function makeWideCsv(columns: number): Buffer {
  return Buffer.from(`${'a,'.repeat(columns - 1)}a\n${'1,'.repeat(columns - 1)}1\n`);
}

/**
 * A PDF of `pages` pages that all draw the same content stream, which inflates to `megabytes`
 * MB: pdf.js decodes and reads it again for every page that uses it.
 */
export function makeSharedStreamPdf(pages: number, megabytes: number): Buffer {
  // One line of text, then drawing operators: megabytes to decode and lex, little text to keep.
  const text = 'BT /F1 12 Tf 72 720 Td (Lake Veyra stores energy.) Tj ET\n';
  const drawing = '0 0 m 612 792 l S\n';
  const body = text + drawing.repeat(Math.ceil((megabytes * 1e6) / drawing.length));
  // FlateDecode is zlib (header and checksum), not raw deflate.
  const content = deflateSync(Buffer.from(body), { level: 1 });
  return makePdf(pages, () => 4, [`<< /Length ${content.length} /Filter /FlateDecode >>`, content]);
}

/** A PDF of `pages` small pages, each with its own line of text. */
export function makeManyPagesPdf(pages: number): Buffer {
  return makePdf(
    pages,
    (i) => 4 + i,
    undefined,
    (i) => Buffer.from(`BT /F1 12 Tf 72 720 Td (Page ${i + 1}) Tj ET`),
  );
}

/**
 * A PDF with a catalog (1), a page tree (2), a font (3) and `pages` pages at 5…; page i's
 * contents are object `contentsOf(i)`: one shared stream (object 4) or one per page.
 */
function makePdf(pages: number, contentsOf: (i: number) => number, shared?: [string, Buffer], own?: (i: number) => Buffer): Buffer {
  const objects = new Map<number, Buffer>();
  const firstPage = own ? 5 + pages : 5;
  const kids = Array.from({ length: pages }, (_, i) => `${firstPage + i} 0 R`).join(' ');
  objects.set(1, Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'));
  objects.set(2, Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`));
  objects.set(3, Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  if (shared) objects.set(4, Buffer.concat([Buffer.from(`${shared[0]}\nstream\n`), shared[1], Buffer.from('\nendstream')]));
  for (let i = 0; i < pages; i++) {
    if (own) {
      const body = own(i);
      objects.set(contentsOf(i), Buffer.concat([Buffer.from(`<< /Length ${body.length} >>\nstream\n`), body, Buffer.from('\nendstream')]));
    }
    objects.set(
      firstPage + i,
      Buffer.from(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentsOf(i)} 0 R >>`,
      ),
    );
  }
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n')];
  let at = parts[0]!.length;
  const max = Math.max(...objects.keys());
  const offsets: number[] = new Array<number>(max + 1).fill(0);
  for (let n = 1; n <= max; n++) {
    const body = objects.get(n);
    if (!body) continue;
    const obj = Buffer.concat([Buffer.from(`${n} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    offsets[n] = at;
    parts.push(obj);
    at += obj.length;
  }
  const xref = [
    `xref\n0 ${max + 1}\n`,
    '0000000000 65535 f \n',
    ...offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 ${o ? 'n' : 'f'} \n`),
  ];
  parts.push(Buffer.from(`${xref.join('')}trailer\n<< /Size ${max + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** A PDF of `pages` pages, each with the lines `linesOf(i)` gives (plain ASCII without parentheses
 *  or backslashes: they are written into PDF strings as they are). */
export function makeTextPdf(pages: number, linesOf: (i: number) => string[]): Buffer {
  return makePdf(
    pages,
    (i) => 4 + i,
    undefined,
    (i) =>
      Buffer.from(
        `BT /F1 10 Tf 14 TL 72 760 Td ${linesOf(i)
          .map((l) => `(${l}) Tj T*`)
          .join(' ')} ET`,
      ),
  );
}
