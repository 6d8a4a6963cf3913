// Per-tenant quotas: how much one tenant may hold (schedules, collections, documents, stored
// bytes) and keep going at once (event streams, runs in flight), so one tenant cannot take the
// service from the others. What a tenant holds answers 403 once full (deleting makes room); what
// it does at once answers 429 with Retry-After (it frees itself). Both name the quota.
//
// A check and the write it guards run one at a time per tenant in this process (TenantLocks), so
// a burst of parallel requests cannot all pass the same count. Several API processes each check
// against the shared count, and may overshoot by the requests they admit in the same moment.
import type { TenantQuotas } from '../config';
import { ApiError } from '../shared/errors';

export type { TenantQuotas };

export type QuotaName = keyof TenantQuotas;

/** No quota at all (an app built without them: tests of other things). */
export const NO_QUOTAS: TenantQuotas = { schedules: 0, collections: 0, documents: 0, storedBytes: 0, streams: 0, runsInFlight: 0 };

/** The environment variable that sets each quota, for the messages. */
const VARIABLE: Record<QuotaName, string> = {
  schedules: 'TENANT_MAX_SCHEDULES',
  collections: 'TENANT_MAX_COLLECTIONS',
  documents: 'TENANT_MAX_DOCUMENTS',
  storedBytes: 'TENANT_MAX_STORED_BYTES',
  streams: 'TENANT_MAX_STREAMS',
  runsInFlight: 'TENANT_MAX_RUNS_IN_FLIGHT',
};

/** What the tenant holds of each stock quota, for the message. */
const HOLDING: Partial<Record<QuotaName, string>> = {
  schedules: 'schedules',
  collections: 'collections',
  documents: 'documents',
  storedBytes: 'bytes of stored documents',
};

/** Seconds a client over a concurrency quota is asked to wait. */
const CONCURRENCY_RETRY_S = 5;

/**
 * Throws unless `used + adding` fits in the quota: 403 for what the tenant holds (it must delete
 * something first), 429 for what it does at once.
 */
export function checkQuota(quotas: TenantQuotas, name: QuotaName, used: number, adding = 1): void {
  const limit = quotas[name];
  if (!limit || used + adding <= limit) return;
  const details = { quota: name, limit, used };
  const holding = HOLDING[name];
  if (holding) {
    throw new ApiError(
      403,
      'quota_exceeded',
      `this tenant holds ${used} ${holding}${adding > 1 ? ` and this would add ${adding}` : ''}; the ${name} quota is ${limit} (${VARIABLE[name]})`,
      details,
    );
  }
  const doing = name === 'streams' ? 'event streams open' : 'runs in flight';
  throw new ApiError(
    429,
    'quota_exceeded',
    `this tenant has ${used} ${doing}; the ${name} quota is ${limit} (${VARIABLE[name]}): wait for one to end`,
    details,
    CONCURRENCY_RETRY_S,
  );
}

/** Runs tasks one at a time per tenant (a quota's count and the write it admits). */
export class TenantLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(tenant: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(tenant) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(tenant, tail);
    void tail.then(() => {
      if (this.tails.get(tenant) === tail) this.tails.delete(tenant);
    });
    return result;
  }
}

/** Event streams open per tenant in this process; a slot is given back when its stream closes. */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly quotas: TenantQuotas) {}

  /** Takes a slot or throws 429; the returned function gives it back (once). */
  take(tenant: string): () => void {
    const used = this.open.get(tenant) ?? 0;
    checkQuota(this.quotas, 'streams', used);
    this.open.set(tenant, used + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(tenant) ?? 1) - 1;
      if (left > 0) this.open.set(tenant, left);
      else this.open.delete(tenant);
    };
  }
}

/**
 * What this process made in the last moments, by id and tenant: a count read from an eventually
 * consistent list (Temporal's visibility) adds them, listed yet or not.
 */
export class RecentlyMade {
  private readonly made = new Map<string, { tenant: string; at: number }>();

  constructor(
    private readonly lagMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  add(id: string, tenant: string): void {
    this.made.set(id, { tenant, at: this.now() });
  }

  remove(id: string): void {
    this.made.delete(id);
  }

  /** The tenant's ids made within the lag (older ones are forgotten, whoever's). */
  of(tenant: string): string[] {
    const t = this.now();
    const ids: string[] = [];
    for (const [id, r] of this.made) {
      if (t - r.at > this.lagMs) this.made.delete(id);
      else if (r.tenant === tenant) ids.push(id);
    }
    return ids;
  }
}
