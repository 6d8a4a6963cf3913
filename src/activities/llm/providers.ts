// The model providers a worker may send a request to: the configured endpoint (OPENAI_*) and an
// optional fallback (LLM_FALLBACK_*). The primary answers unless it has been failing with outage
// errors, with no success in between, for at least LLM_FALLBACK_AFTER; then requests go to the
// fallback, and now and then one tries the primary again (a trial) to notice it is back.
//
// What is known about a provider's health lives in this worker process: each worker learns on its
// own that the primary is down (a new or restarted worker starts with the primary).
import type OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../../config';
import type { LlmRole } from '../../shared/constants';
import { ErrorType } from '../../shared/errors';
import { createLlmClient, LlmUnavailable } from './client';

export interface Provider {
  name: 'primary' | 'fallback';
  baseUrl: string | undefined;
  /** Host and port of the endpoint: the metrics label and the limiter's key (never a key or a path with secrets). */
  endpoint: string;
  models: Record<LlmRole, string>;
  client: () => OpenAI;
  /** LLM_CONTEXT_TOKENS describes the primary's model; the fallback's window is asked of its server. */
  contextTokens: number | undefined;
}

/** Where a request goes; a trial is a request to a primary believed down, to see whether it is back. */
export interface Route {
  provider: Provider;
  trial: boolean;
}

/** The longest time between two trials of a primary believed down. */
const MAX_TRIAL_EVERY_MS = 30_000;

/** The failures that say "this provider is not serving": it cannot be reached, fails, or refuses everything. */
export function isOutage(err: unknown): boolean {
  if (err instanceof LlmUnavailable) return true;
  // A 429 alone is the limiter's business; a provider that answers nothing but 429s for
  // LLM_FALLBACK_AFTER (an exhausted quota, a long throttle) is as good as down.
  return err instanceof ApplicationFailure && err.type === ErrorType.LlmRateLimited;
}

export function endpointOf(baseUrl: string | undefined): string {
  if (!baseUrl) return 'api.openai.com';
  try {
    return new URL(baseUrl).host;
  } catch {
    return 'invalid-url';
  }
}

export class Providers {
  readonly primary: Provider;
  readonly fallback: Provider | undefined;
  private readonly afterMs: number;
  private readonly trialEveryMs: number;
  /** First failure since the last success, and the latest one, per provider. */
  private readonly failing = new Map<Provider, { since: number; last: number }>();
  private lastTrial = 0;
  private readonly now: () => number;

  constructor(config: Pick<Config, 'llm'>, primaryClient: () => OpenAI, now: () => number = Date.now) {
    const llm = config.llm;
    this.now = now;
    this.primary = {
      name: 'primary',
      baseUrl: llm.baseUrl,
      endpoint: endpointOf(llm.baseUrl),
      models: llm.models,
      client: primaryClient,
      contextTokens: llm.contextTokens,
    };
    const fb = llm.fallback;
    this.afterMs = fb?.afterMs ?? Infinity;
    this.trialEveryMs = Math.min(this.afterMs, MAX_TRIAL_EVERY_MS);
    if (fb) {
      let client: OpenAI | undefined;
      this.fallback = {
        name: 'fallback',
        baseUrl: fb.baseUrl,
        endpoint: endpointOf(fb.baseUrl),
        models: fb.models,
        client: () => (client ??= createLlmClient({ llm: { ...llm, apiKey: fb.apiKey, baseUrl: fb.baseUrl } })),
        contextTokens: undefined,
      };
    }
  }

  /** Whether the primary's failures, with no success in between, span LLM_FALLBACK_AFTER. */
  primaryDown(): boolean {
    const f = this.failing.get(this.primary);
    return f !== undefined && f.last - f.since >= this.afterMs;
  }

  /** The provider for the next request: the fallback while the primary is down, except a trial now and then. */
  route(): Route {
    if (!this.fallback || !this.primaryDown()) return { provider: this.primary, trial: false };
    const now = this.now();
    if (now - this.lastTrial >= this.trialEveryMs) {
      this.lastTrial = now;
      return { provider: this.primary, trial: true };
    }
    return { provider: this.fallback, trial: false };
  }

  succeeded(provider: Provider): void {
    this.failing.delete(provider);
  }

  failed(provider: Provider): void {
    const now = this.now();
    const f = this.failing.get(provider);
    if (f) f.last = now;
    else this.failing.set(provider, { since: now, last: now });
  }
}
