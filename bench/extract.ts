// Page extraction (HTML → Markdown, src/activities/crawl/extract.ts) against the jsdom version it
// replaced, in one run: the same Readability and Turndown over a jsdom window (the baseline) and
// over linkedom (the product), on the fixture site's pages and on a generated long article (many
// sections, tables, links and navigation). Prints the time per page of each and their ratio, the
// heap a parsed page holds (with --expose-gc), and whether both gave the same Markdown.
//   node --expose-gc bin/run-ts.mjs bench/extract.ts [--rounds 30] [--kb 300]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Readability } from '@mozilla/readability';
import { JSDOM, VirtualConsole } from 'jsdom';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { htmlToMarkdown } from '../src/activities/crawl/extract';
import { SITE_DIR } from '../test/support/fixture-site';
import { longPage } from '../test/support/long-page';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' }, kb: { type: 'string', default: '300' } } });
const rounds = Number(values.rounds);

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'iframe', 'form']);

/** The extraction as it was: a jsdom window per page. */
function baseline(html: string, url: string) {
  const dom = new JSDOM(html, { url, virtualConsole: new VirtualConsole() });
  const doc = dom.window.document;
  const article = new Readability(doc.cloneNode(true) as Document, { charThreshold: 100 }).parse();
  const title = (article?.title || doc.title || '').trim();
  const markdown = article?.content ? turndown.turndown(article.content) : turndown.turndown(doc.body?.innerHTML ?? '');
  dom.window.close();
  return { title, markdown: markdown.replace(/\n{3,}/g, '\n\n').trim() };
}

/** A long article page: navigation, sections of prose with relative links, tables, a footer. */
const pages: { name: string; html: string; url: string }[] = [
  ...readdirSync(path.join(SITE_DIR, 'articles'))
    .filter((f) => f.endsWith('.html'))
    .map((f) => ({ name: f, html: readFileSync(path.join(SITE_DIR, 'articles', f), 'utf8'), url: `http://fixture.test/articles/${f}` })),
  { name: `generated ${values.kb} KB`, html: longPage(Number(values.kb)), url: 'http://fixture.test/deep/long.html' },
];

function timePerPage(f: (html: string, url: string) => unknown, html: string, url: string): number {
  for (let i = 0; i < 3; i++) f(html, url);
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) f(html, url);
  return Number(process.hrtime.bigint() - start) / 1e6 / rounds;
}

/** Heap a parsed page holds while it is being read (what each crawl in flight costs), in MB. */
function heldMb(parse: (html: string, url: string) => unknown, html: string, url: string): number {
  if (!global.gc) return NaN;
  global.gc();
  const before = process.memoryUsage().heapUsed;
  const held = [parse(html, url), parse(html, url), parse(html, url)];
  global.gc();
  const after = process.memoryUsage().heapUsed;
  if (!held.length) throw new Error('unreachable');
  return (after - before) / 3 / 1024 / 1024;
}
const jsdomParse = (html: string, url: string) => new JSDOM(html, { url, virtualConsole: new VirtualConsole() });
const linkedomParse = (html: string) => parseHTML(html);

console.log(`rounds ${rounds} per page${global.gc ? '' : ' (run with node --expose-gc for steadier heap figures)'}`);
console.log('page | jsdom ms | linkedom ms | ratio | jsdom MB held | linkedom MB held | same Markdown');
for (const p of pages) {
  const same = JSON.stringify(baseline(p.html, p.url)) === JSON.stringify(htmlToMarkdown(p.html, p.url));
  const a = timePerPage(baseline, p.html, p.url);
  const b = timePerPage(htmlToMarkdown, p.html, p.url);
  const ha = heldMb(jsdomParse, p.html, p.url);
  const hb = heldMb(linkedomParse, p.html, p.url);
  console.log(
    `${p.name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(3)} | ${ha.toFixed(2)} | ${hb.toFixed(2)} | ${same ? 'yes' : 'NO'}`,
  );
}
