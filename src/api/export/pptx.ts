// A report as a slide deck (.pptx), written by pptxgenjs (pure JS: nothing is fetched). The
// report's sections are read (each one's Markdown with marked's lexer) into a plan of slides first
// (deckPlan: plain data, so the limits can be checked without a deck), then drawn: a title slide
// (title, question, date), the executive summary, one slide per `##` section with its key points as
// short bullets and their citations [n] (each linked to the references slide that lists it), each
// chart of the run (shown in a section, or listed after the body) on a slide of its own with its
// caption, and the cited references, numbered, over as many slides as they take.
import { marked, type Token, type Tokens } from 'marked';
import type PptxGenJS from 'pptxgenjs';
import { lazyRequire } from '../../infra/lazy';
import { sectionsOf } from '../../shared/report-doc';
import { isSummaryHeading, sentencesOf } from '../../shared/summary';
import type { ArtifactBytes, ExportableReport } from './html';
import { imageSize, RASTER } from './images';
import { citationPieces, decode, referenceEntries } from './tokens';

/** pptxgenjs, loaded at the first export. */
const pptxgen = lazyRequire<typeof PptxGenJS>('pptxgenjs');

/** What bounds the text on one slide. */
export const DECK_LIMITS = {
  bulletsPerSlide: 6,
  bulletChars: 180,
  referencesPerSlide: 8,
  slidesPerSection: 3,
  titleChars: 120,
  questionChars: 400,
} as const;

type Piece = { text: string } | { n: number };
export type DeckSlide =
  | { kind: 'title'; title: string; question: string; date: string }
  | { kind: 'bullets'; title: string; bullets: Piece[][] }
  | { kind: 'chart'; title: string; caption: string; href: string }
  | { kind: 'references'; title: string; refs: { n: number; title: string; url: string }[] };

/** What the title slide says besides the report's title. */
export interface DeckCover {
  question: string;
  date: Date;
}

/** A section of the report: its `##` heading as a slide shows it, and its blocks. */
interface Section {
  heading: string;
  tokens: Token[];
}

export async function reportPptx(report: ExportableReport, cover: DeckCover, artifacts: ArtifactBytes): Promise<Buffer> {
  const slides = deckPlan(report, cover, artifacts);
  const deck = new (pptxgen())();
  deck.layout = 'LAYOUT_WIDE';
  deck.title = report.title;
  deck.subject = 'deep-research report';
  deck.author = 'deep-research';
  const firstRefSlide = slides.findIndex((s) => s.kind === 'references') + 1;
  const text = { fontFace: FONT, lang: report.locale ?? 'en' };
  for (const s of slides) drawSlide(deck.addSlide(), s, { artifacts, firstRefSlide, text });
  return (await deck.write({ outputType: 'nodebuffer' })) as Buffer;
}

/** The slides of a report, in order, their text bounded by DECK_LIMITS. */
export function deckPlan(report: ExportableReport, cover: DeckCover, artifacts: ArtifactBytes): DeckSlide[] {
  const { doc } = report;
  // The cited references only: "Also consulted" (sources the text does not cite) has no place in a deck.
  const { cited, citable } = referenceEntries(doc);
  const refs = cited.map((r) => ({ n: r.n, title: r.title, url: r.href ?? '' }));
  const question = clip(cover.question.replace(/\s+/g, ' ').trim(), DECK_LIMITS.questionChars);
  const slides: DeckSlide[] = [
    { kind: 'title', title: clip(report.title, DECK_LIMITS.titleChars), question, date: dateIn(cover.date, report.locale) },
  ];
  for (const section of sections(doc.sections)) slides.push(...sectionSlides(section, citable, artifacts));
  // The charts the body does not show, each on a slide of its own.
  for (const c of doc.charts) {
    if (RASTER.test(artifacts.get(c.path)?.contentType ?? ''))
      slides.push({ kind: 'chart', title: 'Charts', caption: c.artifactId, href: c.path });
  }
  for (let i = 0; i < refs.length; i += DECK_LIMITS.referencesPerSlide) {
    const part = refs.length > DECK_LIMITS.referencesPerSlide ? ` (${i / DECK_LIMITS.referencesPerSlide + 1})` : '';
    slides.push({ kind: 'references', title: `References${part}`, refs: refs.slice(i, i + DECK_LIMITS.referencesPerSlide) });
  }
  return slides;
}

/**
 * The report's `##` sections with their blocks; the text before the first heading has no slide. A
 * report stored before reports were data is one section without a heading: its text is cut at its
 * own `##` headings.
 */
function sections(stored: { heading: string; markdown: string }[]): Section[] {
  return stored
    .flatMap((s) => (s.heading ? [s] : sectionsOf(s.markdown)))
    .filter((s) => s.heading)
    .map((s) => ({ heading: clip(plain(s.heading), DECK_LIMITS.titleChars), tokens: marked.lexer(s.markdown, { gfm: true }) }));
}

/** A section's slides: its key points (split over a few slides at most), then its charts. */
function sectionSlides(section: Section, citable: ReadonlySet<number>, artifacts: ArtifactBytes): DeckSlide[] {
  const summary = isSummaryHeading(section.heading);
  const bullets: string[] = [];
  const charts: { href: string; caption: string }[] = [];
  for (const t of section.tokens) {
    if (t.type === 'list') for (const item of (t as Tokens.List).items) bullets.push(keySentence(item.text));
    if (t.type !== 'paragraph') continue;
    const p = t as Tokens.Paragraph;
    for (const img of (p.tokens ?? []).filter((x) => x.type === 'image') as Tokens.Image[]) {
      if (RASTER.test(artifacts.get(img.href)?.contentType ?? ''))
        charts.push({ href: img.href, caption: plain(img.text) || section.heading });
    }
    const text = plain(p.text.replace(/!\[[^\]]*\]\([^)]*\)/g, ''));
    // The summary is a few sentences already: each is a bullet; elsewhere a paragraph gives one.
    if (summary) bullets.push(...sentencesOf(text).map((s) => shorten(s)));
    else if (text) bullets.push(keySentence(text));
  }
  const kept = bullets.filter(Boolean).slice(0, DECK_LIMITS.bulletsPerSlide * DECK_LIMITS.slidesPerSection);
  const out: DeckSlide[] = [];
  for (let i = 0; i < kept.length; i += DECK_LIMITS.bulletsPerSlide) {
    const part = kept.length > DECK_LIMITS.bulletsPerSlide ? ` (${i / DECK_LIMITS.bulletsPerSlide + 1})` : '';
    const chunk = kept.slice(i, i + DECK_LIMITS.bulletsPerSlide);
    out.push({ kind: 'bullets', title: `${section.heading}${part}`, bullets: chunk.map((b) => citationPieces(b, citable)) });
  }
  return [...out, ...charts.map((c) => ({ kind: 'chart' as const, title: section.heading, ...c }))];
}

/** A block's key sentence: its first that cites a source (else its first), shortened. */
function keySentence(markdown: string): string {
  const sentences = sentencesOf(plain(markdown));
  return shorten(sentences.find((s) => /\[\d+\]/.test(s)) ?? sentences[0] ?? '');
}

/** A sentence cut to DECK_LIMITS.bulletChars at a word, its citations kept at the end. */
function shorten(sentence: string): string {
  const marks = sentence.match(/\[\d+\]/g) ?? [];
  const bare = sentence.replace(/\s*\[\d+\]/g, '').trim();
  if (bare.length <= DECK_LIMITS.bulletChars) return sentence;
  return `${clip(bare, DECK_LIMITS.bulletChars)}${marks.length ? ` ${[...new Set(marks)].join('')}` : ''}`;
}

/** A text cut to `max` characters at a word (mid-word only when a word is very long), with "…". */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const at = cut.lastIndexOf(' ');
  return `${(at > max / 2 ? cut.slice(0, at) : cut).replace(/[\s,;:]+$/, '')} …`;
}

/** Markdown as the text a slide shows: no markup, links as their text, entities decoded. */
function plain(markdown: string): string {
  return decode(
    markdown
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/(\*\*|__|\*|_|`)(?=\S)([\s\S]*?\S)\1/g, '$2')
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, '')
      .replace(/\\([!-/:-@[-`{-~])/g, '$1')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

function dateIn(date: Date, locale: string | undefined): string {
  try {
    return new Intl.DateTimeFormat(locale ?? 'en', { dateStyle: 'long', timeZone: 'UTC' }).format(date);
  } catch {
    return date.toISOString().slice(0, 10);
  }
}

// ---- drawing (inches on a 13.33 × 7.5 wide slide) ------------------------------------------------

type Slide = ReturnType<PptxGenJS['addSlide']>;
type TextRuns = PptxGenJS.TextProps[];
interface DrawContext {
  artifacts: ArtifactBytes;
  /** The references' first slide, from 1 (0: none). */
  firstRefSlide: number;
  /** Every text's font and language. */
  text: { fontFace: string; lang: string };
}
const FONT = 'Calibri';
const BOX = { x: 0.6, w: 12.1 };

function drawSlide(slide: Slide, s: DeckSlide, ctx: DrawContext): void {
  const t = ctx.text;
  if (s.kind === 'title') {
    slide.addText(s.title, { ...BOX, y: 1.6, h: 1.8, ...t, fontSize: 36, bold: true, valign: 'bottom', fit: 'shrink' });
    slide.addText(s.question, { ...BOX, y: 3.6, h: 1.6, ...t, fontSize: 18, italic: true, color: '444444', valign: 'top', fit: 'shrink' });
    slide.addText(s.date, { ...BOX, y: 5.6, h: 0.6, ...t, fontSize: 14, color: '666666' });
    return;
  }
  slide.addText(s.title, { ...BOX, y: 0.3, h: 0.9, ...t, fontSize: 28, bold: true, fit: 'shrink' });
  if (s.kind === 'bullets') {
    const runs = s.bullets.flatMap((b) => bulletRuns(b, ctx.firstRefSlide));
    slide.addText(runs, { ...BOX, y: 1.35, h: 5.7, ...t, fontSize: 20, valign: 'top', paraSpaceAfter: 10, fit: 'shrink' });
  } else if (s.kind === 'chart') {
    drawChart(slide, s, ctx);
  } else {
    const runs: TextRuns = s.refs.flatMap((r) => [
      { text: `${r.n}. ${r.title.slice(0, 140)}`, options: { breakLine: true, fontSize: 15 } },
      {
        text: r.url.slice(0, 160),
        options: { breakLine: true, fontSize: 11, color: '1D4ED8', ...(r.url ? { hyperlink: { url: r.url } } : {}) },
      },
    ]);
    slide.addText(runs, { ...BOX, y: 1.3, h: 5.8, ...t, valign: 'top', paraSpaceAfter: 4, fit: 'shrink' });
  }
}

/** One bullet: its text, each citation [n] a link to the references slide that lists n. A run
 *  with `bullet` starts a paragraph (pptxgenjs): only the first has it. */
function bulletRuns(pieces: Piece[], firstRefSlide: number): TextRuns {
  return pieces.map((p, i) => {
    const options = i === 0 ? { bullet: true } : {};
    if ('text' in p) return { text: p.text, options };
    const slide = firstRefSlide + Math.floor((p.n - 1) / DECK_LIMITS.referencesPerSlide);
    return { text: `[${p.n}]`, options: { ...options, color: '1D4ED8', ...(firstRefSlide > 0 ? { hyperlink: { slide } } : {}) } };
  });
}

/** A chart scaled into the slide below its title, its caption under it. */
function drawChart(slide: Slide, s: Extract<DeckSlide, { kind: 'chart' }>, ctx: DrawContext): void {
  const a = ctx.artifacts.get(s.href)!;
  const size = imageSize(a.bytes) ?? { width: 1200, height: 720 };
  const box = { w: BOX.w, h: 5.0 };
  const scale = Math.min(box.w / size.width, box.h / size.height);
  const w = size.width * scale;
  const h = size.height * scale;
  slide.addImage({
    data: `${a.contentType};base64,${a.bytes.toString('base64')}`,
    x: BOX.x + (box.w - w) / 2,
    y: 1.3,
    w,
    h,
    altText: s.caption,
  });
  slide.addText(s.caption, { ...BOX, y: 6.5, h: 0.6, ...ctx.text, fontSize: 14, italic: true, align: 'center', fit: 'shrink' });
}
