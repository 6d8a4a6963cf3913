// How many model requests one worker has in flight to one provider, adapted to what the provider
// takes (AIMD, as TCP's congestion window): a 429 halves the limit, successes grow it back by about
// one per window of `limit` successes, up to the ceiling; while a 429's Retry-After runs, nothing
// new is sent there (the requests wait here instead of collecting more 429s). The queue's limit (LLM_QUEUE_RATE) is
// the same for every provider and fixed; this one learns each provider's actual capacity.
// State lives in this worker process: each worker learns on its own.
import { Context } from '@temporalio/activity';
import { metrics } from '../../infra/metrics';
import { shutdownFailure } from '../attempt';
import { startBeat } from '../beat';

/** The longest pause a Retry-After can impose: a bad header must not stall a worker's calls for an hour. */
const MAX_PAUSE_MS = 30_000;

/** How a request that held a slot ended: answered, refused with a 429, or anything else. */
export type SlotOutcome = 'ok' | 'rate-limited' | 'failed';

export interface Slot {
  /** Gives the slot back (later calls are ignored); a 429's Retry-After pauses the provider that long. */
  release(outcome: SlotOutcome, retryAfterMs?: number): void;
}

/** What a request waits on before it goes out. */
export interface Limiter {
  acquire(signal?: AbortSignal): Promise<Slot>;
}

export interface LimiterState {
  limit: number;
  inFlight: number;
  waiting: number;
}

interface Waiter {
  grant: (slot: Slot) => void;
}

export class AimdLimiter implements Limiter {
  /** Kept fractional so each success can add 1/limit; requests are admitted up to its floor. */
  private window: number;
  private active = 0;
  private readonly queue: Waiter[] = [];
  /** Bumped at each decrease: a 429 to a request sent before the last decrease does not halve again. */
  private epoch = 0;
  /** Halvings so far. */
  decreases = 0;
  /** No new request goes out before this time (a 429's Retry-After). */
  private pausedUntil = 0;
  private resume: NodeJS.Timeout | undefined;

  constructor(
    readonly ceiling: number,
    private readonly observe: (state: LimiterState, decreased: boolean) => void = () => undefined,
  ) {
    if (!(ceiling >= 1)) throw new Error(`limiter ceiling must be at least 1, got ${ceiling}`);
    this.window = Math.floor(ceiling);
    this.report(false);
  }

  get limit(): number {
    return Math.max(1, Math.floor(this.window));
  }

  get state(): LimiterState {
    return { limit: this.limit, inFlight: this.active, waiting: this.queue.length };
  }

  /** A slot now if one is free and nobody waits before us, else after the requests queued earlier (FIFO). */
  acquire(signal?: AbortSignal): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (!this.queue.length && this.admits()) return Promise.resolve(this.take());
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(slot);
        },
      };
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        this.report(false);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.report(false);
    });
  }

  private take(): Slot {
    this.active++;
    const epoch = this.epoch;
    let released = false;
    this.report(false);
    return {
      release: (outcome, retryAfterMs) => {
        if (released) return;
        released = true;
        this.active--;
        if (outcome === 'rate-limited' && retryAfterMs) this.pause(Math.min(retryAfterMs, MAX_PAUSE_MS));
        this.settle(outcome, epoch);
      },
    };
  }

  private settle(outcome: SlotOutcome, epoch: number): void {
    let decreased = false;
    if (outcome === 'ok') {
      this.window = Math.min(this.ceiling, this.window + 1 / this.limit);
    } else if (outcome === 'rate-limited' && epoch === this.epoch) {
      // Every request in flight when the provider started refusing gets its 429 at about the same
      // time: one halving per round trip, not one per refused request (which would drop to 1 at once).
      this.epoch++;
      const before = this.limit;
      this.window = Math.max(1, this.window / 2);
      decreased = this.limit < before;
      if (decreased) this.decreases++;
    }
    this.pump();
    this.report(decreased);
  }

  private admits(): boolean {
    return this.active < this.limit && Date.now() >= this.pausedUntil;
  }

  private pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
    clearTimeout(this.resume);
    this.resume = setTimeout(() => (Date.now() < this.pausedUntil ? this.pause(0) : this.pump()), this.pausedUntil - Date.now());
    this.resume.unref();
  }

  private pump(): void {
    while (this.queue.length && this.admits()) this.queue.shift()!.grant(this.take());
  }

  private report(decreased: boolean): void {
    this.observe(this.state, decreased);
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted while waiting for a model request slot');
}

/** One limiter per provider (keyed by its endpoint), each reported in /metrics under that label. */
export function createLimiters(ceiling: number): (provider: string) => AimdLimiter {
  const limiters = new Map<string, AimdLimiter>();
  return (provider) => {
    let limiter = limiters.get(provider);
    if (!limiter) {
      const labels = { provider };
      limiter = new AimdLimiter(ceiling, (state, decreased) => {
        metrics.llmProviderLimit.set(labels, state.limit);
        metrics.llmProviderInFlight.set(labels, state.inFlight);
        metrics.llmProviderWaiting.set(labels, state.waiting);
        if (decreased) metrics.llmProviderDecreases.inc(labels);
      });
      limiters.set(provider, limiter);
    }
    return limiter;
  };
}

/**
 * A slot from inside an activity: heartbeats while it waits (a long queue is not a dead worker)
 * and stops waiting when the attempt is cancelled; a stopping worker hands the call back as
 * retryable, as a request cut by shutdown does (src/activities/attempt.ts).
 */
export async function acquireSlot(limiter: Limiter): Promise<Slot> {
  const ctx = Context.current();
  const beat = startBeat({ waitingFor: 'a model request slot' });
  try {
    return await limiter.acquire(ctx.cancellationSignal);
  } catch (err) {
    throw shutdownFailure('the wait for a model request slot') ?? err;
  } finally {
    beat.stop();
  }
}
