// The quality bench's fixture web: made-up topics no model has read about, each with a question and
// five gold facts planted on specific pages. Some facts sit on a page that shares no word with the
// question: it is found only by a second search, for a name the first pages give (a supplier, a
// trade name). Distractor pages share the topics' names and none of their facts.

export interface CorpusPage {
  /** The page's path on the fixture site. */
  path: string;
  title: string;
  /** Paragraphs of plain text. */
  paragraphs: string[];
}

export interface GoldFact {
  id: string;
  /** What the fact says, for the table's readers. */
  says: string;
  /** Matched in the report's body (case-insensitive, any run of spaces): the fact is there when
   *  one of these is. */
  forms: RegExp[];
  /** The pages that state it: a citation of one of these, next to the fact, grounds it. */
  pages: string[];
}

export interface BenchQuestion {
  id: string;
  question: string;
  facts: GoldFact[];
}

export const PAGES: CorpusPage[] = [
  {
    path: '/ostervik/crosstown-tramway.html',
    title: 'Crosstown Tramway - Ostervik transit authority',
    paragraphs: [
      'The Crosstown Tramway is the light rail line that crosses Ostervik from the harbour district to the university campus.',
      'The line opened to passengers on 14 March 2022, after three years of construction on the old freight corridor.',
      'It is 11.2 km long and serves 19 stops, with trams every six minutes at peak hours.',
      'The rolling stock was supplied by Kessler Rail under a fixed-price contract signed in 2019.',
    ],
  },
  {
    path: '/ostervik/ridership-2024.html',
    title: 'Ostervik public transport ridership report 2024',
    paragraphs: [
      'Bus ridership in Ostervik stayed flat in 2024, while the Crosstown Tramway kept growing.',
      'The Crosstown Tramway carried 41,000 riders on an average weekday in 2024, up from 29,500 in its first full year.',
      'Most new riders came from the university campus and the harbour district.',
    ],
  },
  {
    path: '/ostervik/audit-crosstown.html',
    title: 'City audit office: the Crosstown Tramway project',
    paragraphs: [
      'The audit office reviewed the Crosstown Tramway project after its first year of operation.',
      'The project cost 312 million kronor in total, 9% over the budget the city council approved in 2018.',
      'Most of the overrun came from moving utility lines under the old freight corridor.',
    ],
  },
  {
    path: '/kessler-rail/deliveries.html',
    title: 'Kessler Rail - deliveries',
    paragraphs: [
      'Kessler Rail builds low-floor vehicles for municipal light rail operators in northern Europe.',
      'In 2021 Kessler Rail delivered 24 Vela-class low-floor vehicles for a municipal line order, each 32 metres long.',
      'The Vela class seats 64 passengers and carries 180 at crush load.',
    ],
  },
  {
    path: '/velmar/alloy.html',
    title: 'Velmar alloy - overview',
    paragraphs: [
      'Velmar is an aluminium-scandium-zinc casting alloy developed in 2019 at the Trondholm Institute of Materials.',
      'It is produced only by the Halvorsen Foundry, which sells it under the trade name HF-7.',
      'Bicycle frames and drone arms are its main uses so far.',
    ],
  },
  {
    path: '/velmar/datasheet.html',
    title: 'Velmar alloy datasheet',
    paragraphs: [
      'Mechanical properties of the Velmar alloy as cast and heat treated.',
      'Tensile strength: 610 MPa. Density: 2.71 g/cm3. Elongation at break: 7%.',
      'It machines like ordinary aluminium alloys and can be welded with care.',
    ],
  },
  {
    path: '/halvorsen/tariffs.html',
    title: 'Halvorsen Foundry - tariffs 2025',
    paragraphs: [
      'Halvorsen Foundry tariffs for cast metals, valid from January 2025.',
      'HF-7, our flagship casting metal: 38 EUR per kilogram for orders above one tonne.',
      'HF-2, general purpose casting metal: 6 EUR per kilogram.',
    ],
  },
  {
    path: '/velmar/river.html',
    title: 'The Velmar river',
    paragraphs: [
      'The Velmar is a short river that reaches the sea near Trondholm.',
      'Salmon return to the Velmar every autumn, and its delta is a bird reserve.',
    ],
  },
  {
    path: '/ostervik/harbour-ferry.html',
    title: 'Ostervik harbour ferry',
    paragraphs: [
      'The harbour ferry links the Ostervik harbour district with the islands twice an hour.',
      'Its two boats were rebuilt in 2020 and run on biodiesel.',
    ],
  },
];

export const QUESTIONS: BenchQuestion[] = [
  {
    id: 'tramway',
    question: 'How has the Ostervik Crosstown Tramway done since it opened: its size, riders, cost and trams?',
    facts: [
      {
        id: 'opened',
        says: 'opened on 14 March 2022',
        forms: [/14 March 2022/, /March 14,? 2022/],
        pages: ['/ostervik/crosstown-tramway.html'],
      },
      { id: 'length', says: '11.2 km with 19 stops', forms: [/11\.2 ?km/, /19 stops/], pages: ['/ostervik/crosstown-tramway.html'] },
      {
        id: 'riders',
        says: '41,000 weekday riders in 2024',
        forms: [/41,000/, /41 000/, /41000/],
        pages: ['/ostervik/ridership-2024.html'],
      },
      { id: 'cost', says: '312 million kronor, 9% over budget', forms: [/312 million/], pages: ['/ostervik/audit-crosstown.html'] },
      // Only on Kessler Rail's page, which names neither Ostervik nor the tramway.
      {
        id: 'fleet',
        says: '24 Vela-class trams (second search)',
        forms: [/24 Vela/, /Vela-class/],
        pages: ['/kessler-rail/deliveries.html'],
      },
    ],
  },
  {
    id: 'alloy',
    question: 'What is the Velmar alloy, how strong and dense is it, who makes it and what does it cost?',
    facts: [
      {
        id: 'made-of',
        says: 'aluminium-scandium-zinc, 2019, Trondholm Institute',
        forms: [/scandium/],
        pages: ['/velmar/alloy.html'],
      },
      { id: 'strength', says: 'tensile strength 610 MPa', forms: [/610 ?MPa/], pages: ['/velmar/datasheet.html'] },
      { id: 'density', says: 'density 2.71 g/cm3', forms: [/2\.71/], pages: ['/velmar/datasheet.html'] },
      { id: 'maker', says: 'only the Halvorsen Foundry (trade name HF-7)', forms: [/Halvorsen/], pages: ['/velmar/alloy.html'] },
      // Only on Halvorsen's tariffs, which name the alloy by its trade name alone.
      {
        id: 'price',
        says: '38 EUR per kilogram (second search)',
        forms: [/38 ?(EUR|€|euros?)/, /€ ?38/],
        pages: ['/halvorsen/tariffs.html'],
      },
    ],
  },
];

/** A page as HTML, the way the fixture site serves it. */
export function pageHtml(page: CorpusPage): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(page.title)}</title></head><body><main><article><h1>${esc(page.title)}</h1>${page.paragraphs.map((p) => `<p>${esc(p)}</p>`).join('')}</article></main></body></html>`;
}

const STOP = new Set([
  'the',
  'and',
  'for',
  'how',
  'has',
  'its',
  'what',
  'who',
  'does',
  'did',
  'since',
  'with',
  'from',
  'that',
  'this',
  'are',
  'was',
  'is',
  'it',
  'of',
  'in',
  'on',
  'to',
  'a',
  'an',
]);
const terms = (text: string) => [
  ...new Set((text.toLowerCase().match(/[a-z0-9]+(?:-[a-z0-9]+)*/g) ?? []).filter((w) => w.length > 1 && !STOP.has(w))),
];

/**
 * The corpus searched as a small engine would: a page matches when it holds at least half of the
 * query's words (at least one), ranked by how many it holds, its title's counting twice; the
 * snippet is the paragraph that holds most of them. A page that shares no word with the question
 * is found only by a query that names what it is about.
 */
export function searchCorpus(query: string, siteUrl: string, max = 5): { url: string; title: string; content: string }[] {
  const q = terms(query);
  if (!q.length) return [];
  const scored = PAGES.map((page) => {
    const body = terms(page.paragraphs.join(' '));
    const title = terms(page.title);
    const held = q.filter((t) => body.includes(t) || title.includes(t));
    const score = held.length + q.filter((t) => title.includes(t)).length;
    const snippet = [...page.paragraphs].sort(
      (a, b) => terms(b).filter((t) => q.includes(t)).length - terms(a).filter((t) => q.includes(t)).length,
    )[0]!;
    return { page, held: held.length, score, snippet };
  });
  return scored
    .filter((s) => s.held >= Math.max(1, Math.ceil(q.length / 2)))
    .sort((a, b) => b.score - a.score)
    .slice(0, max)
    .map((s) => ({ url: `${siteUrl}${s.page.path}`, title: s.page.title, content: s.snippet }));
}
