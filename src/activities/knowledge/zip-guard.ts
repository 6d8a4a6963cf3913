// An Office file (a ZIP) checked before any parser opens it: its entries are read from the
// central directory (as JSZip, which mammoth and ExcelJS use, reads them), the sizes they declare
// are held to the document's cap, and then every entry is inflated once, streaming, with its
// output counted and thrown away: a declared size may lie, the inflater's output does not. A
// zip bomb is refused after at most the cap's worth of inflating, and nothing of it is kept.
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { capCount, DocumentTooLarge, DocumentUnreadable, InflateBudget, megabytes, tooLarge, type ParseCaps } from './parse-caps';

export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX32 = 0xffffffff;

const unreadable = (why: string) => new DocumentUnreadable(`not a readable ZIP: ${why}`);

/** The entries of the ZIP's central directory; throws DocumentUnreadable for a broken one. */
export function zipEntries(bytes: Buffer, maxEntries: number): ZipEntry[] {
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || eocd + 22 > bytes.length || bytes.readUInt32LE(eocd) !== EOCD) throw unreadable('no end of central directory');
  let count = bytes.readUInt16LE(eocd + 10);
  let offset = bytes.readUInt32LE(eocd + 16);
  if (count === 0xffff || offset === MAX32) {
    const locator = eocd - 20;
    if (locator < 0 || bytes.readUInt32LE(locator) !== ZIP64_LOCATOR) throw unreadable('a ZIP64 directory without its locator');
    const at = safeNumber(bytes.readBigUInt64LE(locator + 8));
    if (at + 56 > bytes.length || bytes.readUInt32LE(at) !== ZIP64_EOCD) throw unreadable('a broken ZIP64 directory');
    count = safeNumber(bytes.readBigUInt64LE(at + 32));
    offset = safeNumber(bytes.readBigUInt64LE(at + 48));
  }
  capCount(count, maxEntries, 'ZIP entries', 'KB_PARSE_MAX_ZIP_ENTRIES');
  const entries: ZipEntry[] = [];
  for (let at = offset, i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL) throw unreadable(`directory entry ${i + 1} is missing`);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const entry: ZipEntry = {
      name: bytes.toString('utf8', at + 46, at + 46 + nameLength),
      flags: bytes.readUInt16LE(at + 8),
      method: bytes.readUInt16LE(at + 10),
      compressedSize: bytes.readUInt32LE(at + 20),
      size: bytes.readUInt32LE(at + 24),
      localOffset: bytes.readUInt32LE(at + 42),
    };
    readZip64Extra(bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry);
    entries.push(entry);
    at += 46 + nameLength + extraLength + bytes.readUInt16LE(at + 32);
  }
  return entries;
}

/** Sizes and offsets too large for 32 bits, from the entry's ZIP64 extra field (in this order). */
function readZip64Extra(extra: Buffer, entry: ZipEntry): void {
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== 0x0001) continue;
    let field = at + 4;
    for (const key of ['size', 'compressedSize', 'localOffset'] as const) {
      if (entry[key] !== MAX32) continue;
      if (field + 8 > extra.length) throw unreadable(`a broken ZIP64 field in ${entry.name}`);
      entry[key] = safeNumber(extra.readBigUInt64LE(field));
      field += 8;
    }
  }
}

function safeNumber(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw unreadable('a size beyond any real file');
  return Number(n);
}

/**
 * Refuses the ZIP unless every entry inflates, in total, to at most the document's cap
 * (declared sizes first, then the real output). Returns the entries for the structure checks.
 */
export async function checkZip(bytes: Buffer, caps: ParseCaps, budget: InflateBudget): Promise<ZipEntry[]> {
  const entries = zipEntries(bytes, caps.maxZipEntries);
  const declared = entries.reduce((sum, e) => sum + e.size, 0);
  if (declared > budget.max) {
    throw tooLarge(
      `the file's entries declare ${megabytes(declared)} uncompressed, more than the ${megabytes(budget.max)} a document may`,
      'KB_PARSE_MAX_INFLATED_MB',
    );
  }
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue;
    if (entry.flags & 1) throw new DocumentUnreadable(`${entry.name} is encrypted (a password is needed)`);
    await inflateCounted(bytes, entry, budget);
  }
  return entries;
}

/** Inflates one entry in small pieces, counting what comes out, keeping nothing. */
async function inflateCounted(bytes: Buffer, entry: ZipEntry, budget: InflateBudget): Promise<void> {
  const at = entry.localOffset;
  if (at + 30 > bytes.length || bytes.readUInt32LE(at) !== LOCAL) throw unreadable(`the data of ${entry.name} is missing`);
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return budget.take(data.length, entry.name);
  if (entry.method !== 8) throw unreadable(`${entry.name} is compressed with method ${entry.method}, which Office files do not use`);
  const inflater = createInflateRaw({ chunkSize: 64 * 1024 });
  try {
    for await (const chunk of Readable.from([data]).pipe(inflater)) budget.take((chunk as Buffer).length, entry.name);
  } catch (err) {
    if (err instanceof DocumentTooLarge) throw err;
    throw unreadable(`${entry.name} does not inflate (${(err as Error).message})`);
  } finally {
    inflater.destroy();
  }
}
