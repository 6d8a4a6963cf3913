// The shortest gap between two starts of a five-field cron expression (minute hour day-of-month
// month day-of-week), so a schedule's `cron` is held to SCHEDULE_MIN_INTERVAL like its `every`.
// The fire times are walked over a window of days; days match when either day field does (cron's
// rule; Temporal asks both to), which can only find more starts, never fewer: a gap found here
// is never longer than the schedule's real one.
import { ApiError } from '../shared/errors';

interface Field {
  name: string;
  min: number;
  max: number;
  /** Names for the values from `min` on (months from 1, weekdays from 0). */
  names?: string[];
}

const FIELDS: Field[] = [
  { name: 'Minute', min: 0, max: 59 },
  { name: 'Hour', min: 0, max: 23 },
  { name: 'DayOfMonth', min: 1, max: 31 },
  { name: 'Month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'DayOfWeek', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

/** Days walked: every month and weekday combination comes round within about 28 years, but a
 *  gap between two starts is found long before (a schedule that starts less than once in five
 *  years has a gap of at least that). */
const WINDOW_DAYS = 5 * 366;
const DAY_MINUTES = 24 * 60;

function refused(field: Field, message: string): ApiError {
  return new ApiError(400, 'invalid_schedule', `the schedule was refused: cron ${field.name} field: ${message}`);
}

function value(field: Field, text: string): number {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  const n = named >= 0 ? field.min + named : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < field.min || n > field.max)
    throw refused(field, `"${text}" is not a value from ${field.min} to ${field.max}`);
  return n;
}

/** The values a field matches; `any` when it is `*` or `?` (which matters for the day fields). */
function parseField(field: Field, text: string): { values: Set<number>; any: boolean } {
  const values = new Set<number>();
  let any = false;
  for (const item of text.split(',')) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(item);
    if (!m) throw refused(field, `"${item}" is not understood`);
    const [, range, stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw refused(field, `a step of ${stepText} is not allowed`);
    let from: number;
    let to: number;
    if (range === '*' || range === '?') {
      [from, to] = [field.min, field.max];
      if (stepText === undefined) any = true;
    } else if (range!.includes('-')) {
      const [a, b, ...rest] = range!.split('-');
      if (rest.length) throw refused(field, `"${range}" is not a range`);
      [from, to] = [value(field, a!), value(field, b!)];
      if (from > to) throw refused(field, `"${range}" runs backwards`);
    } else {
      from = value(field, range!);
      to = stepText === undefined ? from : field.max;
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return { values, any };
}

/**
 * The shortest time in ms between two consecutive starts of `cron` (in its own time zone's wall
 * clock), or undefined if it starts at most once in the window. A field it cannot read is a 400.
 */
export function shortestCronGapMs(cron: string): number | undefined {
  const parts = cron.trim().split(/\s+/);
  if (parts.length !== 5)
    throw new ApiError(400, 'invalid_schedule', 'cron must have five fields: minute hour day-of-month month day-of-week');
  const [minutes, hours, dom, month, dow] = parts.map((p, i) => parseField(FIELDS[i]!, p));
  if (dow!.values.has(7)) dow!.values.add(0); // 7 is Sunday too
  const times = [...hours!.values].flatMap((h) => [...minutes!.values].map((m) => h * 60 + m)).sort((a, b) => a - b);
  const dayMatches = (d: Date) => {
    if (!month!.values.has(d.getUTCMonth() + 1)) return false;
    const byDom = dom!.values.has(d.getUTCDate());
    const byDow = dow!.values.has(d.getUTCDay());
    if (dom!.any || dow!.any) return (dom!.any || byDom) && (dow!.any || byDow);
    return byDom || byDow;
  };
  let shortest: number | undefined;
  let previous: number | undefined;
  // Any fixed start works: the walk covers every combination of weekday and date it needs.
  const start = Date.UTC(2024, 0, 1);
  for (let day = 0; day < WINDOW_DAYS; day++) {
    const date = new Date(start + day * DAY_MINUTES * 60_000);
    if (!dayMatches(date)) continue;
    for (const t of times) {
      const at = day * DAY_MINUTES + t;
      if (previous !== undefined) shortest = Math.min(shortest ?? Infinity, at - previous);
      previous = at;
      if (shortest === 1) return 60_000;
    }
  }
  return shortest === undefined ? undefined : shortest * 60_000;
}
