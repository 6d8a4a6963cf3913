// A run's time range as absolute dates, and what falls outside it. Pure: the workflow resolves a
// run's range against its own start time (the same dates on every replay and retry), and the
// activities check publication dates with the same rules.
import type { TimeRange } from './schemas';

/** Inclusive calendar dates (`YYYY-MM-DD`, UTC); a missing end is open. */
export interface DateRange {
  from?: string;
  to?: string;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * `day`, `week`, `month`, `year`: from that long before `start` (calendar month and year, UTC),
 * with no end, so a page published while a long run goes on still counts; dates are kept as given.
 */
export function resolveTimeRange(range: TimeRange, start: Date): DateRange {
  if (typeof range !== 'string') return { ...(range.from ? { from: range.from } : {}), ...(range.to ? { to: range.to } : {}) };
  const from = new Date(start.getTime());
  if (range === 'day') from.setUTCDate(from.getUTCDate() - 1);
  else if (range === 'week') from.setUTCDate(from.getUTCDate() - 7);
  else if (range === 'month') from.setUTCMonth(from.getUTCMonth() - 1);
  else from.setUTCFullYear(from.getUTCFullYear() - 1);
  return { from: day(from) };
}

/** The calendar date (UTC) of a publication date as providers and pages give it, or undefined
 *  when it is not a date (then the date counts as unknown). */
export function publicationDay(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  const s = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ? undefined : s;
  if (/^\d{4}$/.test(s)) return undefined; // a year alone is too coarse to place in a day or week
  // A local time without a zone: its own calendar date, not the machine's reading of it.
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) return publicationDay(s.slice(0, 10));
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  const d = new Date(t);
  const y = d.getUTCFullYear();
  return y >= 1900 && y <= 9999 ? day(d) : undefined;
}

/** True when the day is known and outside the range (bounds inclusive); an unknown day is not. */
export function outsideRange(published: string | undefined, range: DateRange | undefined): boolean {
  if (!published || !range) return false;
  return (range.from !== undefined && published < range.from) || (range.to !== undefined && published > range.to);
}

/** How a range reads in a message: "2026-10-25 to 2026-11-25", "since 2026-10-25", "until 2020-01-01". */
export function describeRange(range: DateRange): string {
  if (range.from && range.to) return `${range.from} to ${range.to}`;
  return range.from ? `since ${range.from}` : `until ${range.to ?? '?'}`;
}
