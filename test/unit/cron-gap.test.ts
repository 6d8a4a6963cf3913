// The shortest gap between two starts of a cron expression, which SCHEDULE_MIN_INTERVAL holds a
// schedule's `cron` to (as it holds `every`).
import { describe, expect, it } from 'vitest';
import { shortestCronGapMs } from '../../src/api/cron-gap';
import { ApiError } from '../../src/shared/errors';

const minutes = (cron: string) => {
  const ms = shortestCronGapMs(cron);
  return ms === undefined ? undefined : ms / 60_000;
};

describe('shortestCronGapMs', () => {
  it('finds the closest two starts within an hour, a day and across midnight', () => {
    expect(minutes('* * * * *')).toBe(1);
    expect(minutes('*/5 * * * *')).toBe(5);
    expect(minutes('0,1 * * * *')).toBe(1);
    expect(minutes('0 * * * *')).toBe(60);
    expect(minutes('0 */6 * * *')).toBe(6 * 60);
    // 23:50 and 00:10 the next day are 20 minutes apart, although the two differ by 40 within a day.
    expect(minutes('10,50 0,23 * * *')).toBe(20);
    expect(minutes('0 9-17 * * MON-FRI')).toBe(60);
    expect(minutes('0-59/15 * * * *')).toBe(15);
  });

  it('counts days: weekly, monthly and yearly schedules are far apart', () => {
    expect(minutes('0 6 * * 1')).toBe(7 * 24 * 60);
    // Friday then Monday: three days.
    expect(minutes('0 6 * * 1,5')).toBe(3 * 24 * 60);
    expect(minutes('0 0 1 * *')).toBe(28 * 24 * 60);
    expect(minutes('0 0 1 1 *')).toBe(365 * 24 * 60);
    // Sunday as 0, 7 or its name is the same day.
    expect(minutes('0 0 * * 0,7')).toBe(minutes('0 0 * * SUN'));
    expect(minutes('0 0 29 2 *')).toBe(4 * 365 * 24 * 60 + 24 * 60);
  });

  it('takes either day field, as cron does, so it never finds a gap longer than the real one', () => {
    // The 1st of the month or any Monday: two Mondays a week apart, or a Monday the 1st's neighbour.
    expect(minutes('0 0 1 * MON')).toBe(24 * 60);
  });

  it('refuses fields it cannot read, naming the field', () => {
    for (const [cron, field] of [
      ['61 * * * *', 'Minute'],
      ['* 24 * * *', 'Hour'],
      ['* * 0 * *', 'DayOfMonth'],
      ['* * * FOO *', 'Month'],
      ['* * * * 8', 'DayOfWeek'],
      ['*/0 * * * *', 'Minute'],
      ['5-1 * * * *', 'Minute'],
      ['L * * * *', 'Minute'],
    ] as const) {
      let caught: unknown;
      try {
        shortestCronGapMs(cron);
      } catch (err) {
        caught = err;
      }
      expect(caught, cron).toBeInstanceOf(ApiError);
      expect((caught as ApiError).status).toBe(400);
      expect((caught as ApiError).message).toContain(field);
    }
  });
});
