// Serper: Google's results as JSON (`POST /search` on google.serper.dev, key in `X-API-KEY`). A
// time range becomes Google's `tbs`: `qdr:d|w|m|y` for "the last day, week, month or year" (what
// Google answers best), else a custom date range `cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY`. Google
// dates a result in words ("Mar 12, 2024", "3 days ago"); both become a date. Serper's errors
// are `{ message, statusCode }`: 403 for a bad key, 400 "Not enough credits".
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchHit, SearchOptions, SearchProvider } from './types';

interface Organic {
  title?: string;
  link?: string;
  snippet?: string;
  date?: string;
  position?: number;
}

export interface SerperOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  /** Today, for relative dates and open-ended ranges (tests fix it). */
  now?: () => Date;
}

const DAY_MS = 86_400_000;
const day = (d: Date) => d.toISOString().slice(0, 10);
const usDate = (iso: string) => {
  const [y, m, d] = iso.split('-').map(Number);
  return `${m}/${d}/${y}`;
};

/** Google's `tbs` for a time range, or undefined for none. */
export function serperTbs(range: SearchOptions['timeRange'], now: Date): string | undefined {
  if (!range?.from && !range?.to) return undefined;
  const today = day(now);
  const openEnded = !range.to || range.to >= today;
  if (openEnded && range.from) {
    const days = (Date.parse(today) - Date.parse(range.from)) / DAY_MS;
    const recent = (
      [
        [1, 'd'],
        [7, 'w'],
        [31, 'm'],
        [366, 'y'],
      ] as const
    ).find(([n]) => days <= n);
    if (recent) return `qdr:${recent[1]}`;
  }
  const parts = ['cdr:1'];
  if (range.from) parts.push(`cd_min:${usDate(range.from)}`);
  parts.push(`cd_max:${usDate(range.to && range.to < today ? range.to : today)}`);
  return parts.join(',');
}

const UNIT_MS: Record<string, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: DAY_MS,
  week: 7 * DAY_MS,
  month: 30 * DAY_MS,
  year: 365 * DAY_MS,
};

/** `YYYY-MM-DD` of Google's date of a result ("Mar 12, 2024", "12 Mar 2024", "3 days ago"). */
export function googleDate(raw: string | undefined, now: Date): string | undefined {
  if (!raw) return undefined;
  const ago = /^(\d+)\s+(minute|hour|day|week|month|year)s?\s+ago$/i.exec(raw.trim());
  if (ago) return day(new Date(now.getTime() - Number(ago[1]) * UNIT_MS[ago[2]!.toLowerCase()]!));
  const t = Date.parse(`${raw.trim()} UTC`);
  return Number.isNaN(t) ? undefined : day(new Date(t));
}

export function serperProvider(opts: SerperOptions): SearchProvider {
  const now = opts.now ?? (() => new Date());
  return {
    name: 'serper',
    async search(query, { maxResults, signal, timeRange }) {
      const request: Record<string, unknown> = { q: query, num: maxResults };
      const tbs = serperTbs(timeRange, now());
      if (tbs) request.tbs = tbs;
      const body = (await getJson(
        new URL('/search', opts.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': opts.apiKey },
          body: JSON.stringify(request),
          timeoutMs: opts.timeoutMs,
          signal,
        },
        'Serper',
      )) as { organic?: Organic[] };
      return (body.organic ?? [])
        .filter((r) => typeof r.link === 'string' && /^https?:/.test(r.link))
        .slice(0, maxResults)
        .map((r, i) => {
          const published = googleDate(r.date, now());
          return {
            title: r.title || r.link!,
            url: r.link!,
            content: r.snippet ?? '',
            score: 1 / (r.position ?? i + 1),
            source: 'serper',
            ...(published ? { published } : {}),
          } satisfies SearchHit;
        });
    },
  };
}

export const serper = defineProvider({
  name: 'serper',
  topics: ['general', 'news'],
  settings: {
    SERPER_API_KEY: optionalString.describe("Serper's API key (Google results)"),
    SERPER_BASE_URL: z.url().default('https://google.serper.dev').describe("Serper's API"),
  },
  needs: { variable: 'SERPER_API_KEY', what: 'a Serper key' },
  onByDefault: (s) => s.SERPER_API_KEY !== undefined,
  turnedOnBy: 'SERPER_API_KEY',
  rate: fixedRate(5),
  make: (s, c) => serperProvider({ apiKey: s.SERPER_API_KEY!, baseUrl: s.SERPER_BASE_URL, timeoutMs: c.timeoutMs }),
});
