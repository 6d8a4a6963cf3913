// Reads a .pptx back for tests: each slide's paragraphs (the first is its title), the text of each
// run that links somewhere with the link's target (another slide, or an address), and the pictures
// it draws, as the package's relationships name them.
import JSZip from 'jszip';

export interface ReadSlide {
  /** From 1, in the deck's order. */
  n: number;
  title: string;
  paragraphs: string[];
  /** Linked runs: `slide` is the number of the slide a jump goes to; `url` an outside address. */
  links: { text: string; slide?: number; url?: string }[];
  /** Package paths of the pictures it draws (ppt/media/…). */
  images: string[];
}

const unescape = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|apos|#x([0-9a-f]+));/gi, (_m, e: string, hex?: string) =>
    hex ? String.fromCodePoint(parseInt(hex, 16)) : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e]!,
  );

export async function readPptx(bytes: Buffer): Promise<{ slides: ReadSlide[]; media: string[] }> {
  const zip = await JSZip.loadAsync(bytes);
  const files = Object.keys(zip.files);
  const slideFiles = files
    .filter((f) => /^ppt\/slides\/slide\d+\.xml$/.test(f))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  const slides: ReadSlide[] = [];
  for (const [i, file] of slideFiles.entries()) {
    const xml = await zip.file(file)!.async('string');
    const relsFile = file.replace(/slides\/(slide\d+\.xml)$/, 'slides/_rels/$1.rels');
    const rels = new Map<string, { target: string; external: boolean }>();
    for (const m of ((await zip.file(relsFile)?.async('string')) ?? '').matchAll(/<Relationship ([^>]*)\/>/g)) {
      const attr = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(m[1]!)?.[1] ?? '';
      rels.set(attr('Id'), { target: unescape(attr('Target')), external: attr('TargetMode') === 'External' });
    }
    const paragraphs = [...xml.matchAll(/<a:p>([\s\S]*?)<\/a:p>/g)]
      .map((p) => [...p[1]!.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((t) => unescape(t[1]!)).join(''))
      .filter(Boolean);
    const links = [...xml.matchAll(/<a:r>([\s\S]*?)<\/a:r>/g)].flatMap((r) => {
      const id = /<a:hlinkClick r:id="([^"]+)"/.exec(r[1]!)?.[1];
      const rel = id ? rels.get(id) : undefined;
      if (!rel) return [];
      const text = unescape(/<a:t>([^<]*)<\/a:t>/.exec(r[1]!)?.[1] ?? '');
      const slide = /^(?:\.\.\/slides\/)?slide(\d+)\.xml$/.exec(rel.target)?.[1];
      return [slide ? { text, slide: Number(slide) } : { text, url: rel.target }];
    });
    const images = [...xml.matchAll(/<a:blip r:embed="([^"]+)"/g)].map((m) => `ppt/${rels.get(m[1]!)!.target.replace(/^\.\.\//, '')}`);
    slides.push({ n: i + 1, title: paragraphs[0] ?? '', paragraphs, links, images });
  }
  return { slides, media: files.filter((f) => /^ppt\/media\/[^/]+$/.test(f)) };
}
