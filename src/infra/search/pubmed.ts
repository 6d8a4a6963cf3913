// PubMed through NCBI's E-utilities: esearch finds the PMIDs (best match first), esummary gives
// their titles, journals and dates. Keyless works at 3 requests a second; NCBI_API_KEY raises that
// to 10. NCBI's quirks: a refused query is a 200 whose `esearchresult.ERROR` says why, the rate
// limit is a 429 with Retry-After (and its JSON body has sometimes come with a 200), and esummary
// lists the records it found in `result.uids`, each record under its uid.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, isoDate, ProviderHttpError, stripTags } from './http';
import { defineProvider } from './provider';
import type { SearchHit, SearchOptions, SearchProvider } from './types';

interface ESearch {
  error?: string;
  esearchresult?: { idlist?: string[]; ERROR?: string; count?: string };
}

interface ESummaryRecord {
  uid: string;
  title?: string;
  pubdate?: string;
  sortpubdate?: string;
  fulljournalname?: string;
  source?: string;
  authors?: { name: string; authtype?: string }[];
  pubtype?: string[];
  error?: string;
}

interface ESummary {
  error?: string;
  result?: { uids?: string[] } & Record<string, ESummaryRecord | string[] | undefined>;
}

export interface PubMedOptions {
  baseUrl: string;
  timeoutMs: number;
  apiKey?: string | undefined;
}

/** NCBI's dates are `YYYY/MM/DD`; a missing end of the range is open. */
const ncbiDate = (iso: string) => iso.replace(/-/g, '/');

/** A 200 whose body is NCBI's rate-limit answer, or another top-level error. */
function checkTopLevel(body: { error?: string }, what: string): void {
  if (!body.error) return;
  const limited = /rate limit/i.test(body.error);
  throw new ProviderHttpError(`PubMed ${what} answered: ${body.error.slice(0, 200)}`, limited ? 429 : 502);
}

export function pubmedProvider(opts: PubMedOptions): SearchProvider {
  const eutil = (name: string, params: Record<string, string>) => {
    const u = new URL(`/entrez/eutils/${name}.fcgi`, opts.baseUrl);
    for (const [k, v] of Object.entries({ db: 'pubmed', retmode: 'json', tool: 'deep-research', ...params })) u.searchParams.set(k, v);
    if (opts.apiKey) u.searchParams.set('api_key', opts.apiKey);
    return u;
  };
  const request = { headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs };

  async function findIds(query: string, { maxResults, signal, timeRange }: SearchOptions): Promise<string[]> {
    const params: Record<string, string> = { term: query, retmax: String(maxResults), sort: 'relevance' };
    if (timeRange?.from || timeRange?.to) {
      // NCBI takes a range only with both ends.
      Object.assign(params, {
        datetype: 'pdat',
        mindate: ncbiDate(timeRange.from ?? '1800-01-01'),
        maxdate: ncbiDate(timeRange.to ?? '3000-12-31'),
      });
    }
    const body = (await getJson(eutil('esearch', params), { ...request, signal }, 'PubMed')) as ESearch;
    checkTopLevel(body, 'esearch');
    const refused = body.esearchresult?.ERROR;
    if (refused) throw new ProviderHttpError(`PubMed refused the query: ${refused.slice(0, 200)}`, 400);
    return (body.esearchresult?.idlist ?? []).slice(0, maxResults);
  }

  return {
    name: 'pubmed',
    async search(query, options) {
      const ids = await findIds(query, options);
      if (!ids.length) return [];
      const body = (await getJson(eutil('esummary', { id: ids.join(',') }), { ...request, signal: options.signal }, 'PubMed')) as ESummary;
      if (!body.result) checkTopLevel(body, 'esummary');
      const found = new Set(body.result?.uids ?? []);
      return ids
        .filter((id) => found.has(id))
        .map((id) => body.result![id] as ESummaryRecord)
        .filter((r) => r && !r.error && r.title)
        .map((r, i) => toHit(r, i));
    },
  };
}

function toHit(r: ESummaryRecord, rank: number): SearchHit {
  const authors = (r.authors ?? []).filter((a) => !a.authtype || a.authtype === 'Author').map((a) => a.name);
  const byline = authors.length > 3 ? `${authors.slice(0, 3).join(', ')} et al.` : authors.join(', ');
  const meta = [r.fulljournalname || r.source, r.pubdate, (r.pubtype ?? []).join(', ')].filter(Boolean).join('; ');
  const published = isoDate(r.sortpubdate);
  return {
    title: stripTags(r.title!),
    url: `https://pubmed.ncbi.nlm.nih.gov/${r.uid}/`,
    content: [meta && `(${meta})`, byline].filter(Boolean).join(' '),
    score: 1 / (rank + 1),
    source: 'pubmed',
    ...(published ? { published } : {}),
  };
}

export const pubmed = defineProvider({
  name: 'pubmed',
  topics: ['biomedical'],
  settings: {
    PUBMED_BASE_URL: z.url().default('https://eutils.ncbi.nlm.nih.gov').describe("PubMed's E-utilities (keyless)"),
    NCBI_API_KEY: optionalString.describe("an NCBI API key: PubMed's limit goes from 3 to 10 requests a second"),
  },
  onByDefault: () => true,
  // NCBI allows 3 requests a second without a key, 10 with one; each search makes two.
  rate: { of: (s) => (s.NCBI_API_KEY ? 4 : 1), note: '`4` with `NCBI_API_KEY`; a PubMed search is two requests' },
  make: (s, c) => pubmedProvider({ baseUrl: s.PUBMED_BASE_URL, apiKey: s.NCBI_API_KEY, timeoutMs: c.timeoutMs }),
});
