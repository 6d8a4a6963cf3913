// The schedules quota counts what the (eventually consistent) schedule list shows, corrected by what
// this process made or deleted a moment ago (src/api/schedule-service.ts).
import { describe, expect, it } from 'vitest';
import { ScheduleQuota } from '../../src/api/schedule-service';
import type { TenantQuotas } from '../../src/api/quotas';

describe('the schedules quota', () => {
  it('frees the place of a schedule deleted a moment ago that the list still shows, and counts one made a moment ago it does not', async () => {
    let listed = ['a', 'b'];
    const quota = new ScheduleQuota({ schedules: 2 } as TenantQuotas, async () => listed);
    const make = (id: string) => quota.admit('t', id, async () => ({ created: true }));
    await expect(make('c')).rejects.toMatchObject({ status: 403 });
    quota.deleted('b', 't');
    // The list still shows b: its place is free all the same.
    await expect(make('c')).resolves.toEqual({ created: true });
    // c is not listed yet: it counts, so a fourth is refused.
    await expect(make('d')).rejects.toMatchObject({ status: 403 });
    // Made again under its id, b counts once more.
    listed = ['a'];
    quota.deleted('c', 't');
    await expect(make('b')).resolves.toEqual({ created: true });
    await expect(make('e')).rejects.toMatchObject({ status: 403 });
  });
});
