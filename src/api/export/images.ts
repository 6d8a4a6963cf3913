// What the exports know of a chart's bytes: whether they can be drawn (PNG and JPEG only), and
// their size in pixels from the header, to scale a picture without decoding it.

/** The content types an export draws as a picture. */
export const RASTER = /^image\/(png|jpeg)$/;

/** A PNG's or JPEG's size in pixels, from its header; undefined when the bytes say neither. */
export function imageSize(b: Buffer): { width: number; height: number } | undefined {
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  // JPEG: walk the segments to a start-of-frame marker (C0-CF except C4, C8 and CC).
  for (let i = 2; i + 9 < b.length;) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}
