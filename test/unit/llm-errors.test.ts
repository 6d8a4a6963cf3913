import { APIConnectionTimeoutError, APIError } from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { estimateCostUsd, mapLlmError } from '../../src/activities/llm/client';

function apiError(status: number, message: string, headers: Record<string, string> = {}, code?: string) {
  return APIError.generate(status, { error: { message, ...(code ? { code } : {}) } }, message, new Headers(headers));
}

describe('mapLlmError', () => {
  it('429 waits for Retry-After', () => {
    const f = mapLlmError(apiError(429, 'slow down', { 'retry-after': '2' }), 'm') as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBe(2000);
  });

  it.each([
    [401, 'LlmAuth'],
    [403, 'LlmAuth'],
    [400, 'LlmBadRequest'],
    [404, 'LlmBadRequest'],
    [422, 'LlmBadRequest'],
  ])('%i is permanent (%s)', (status, type) => {
    const f = mapLlmError(apiError(status, 'nope'), 'm') as ApplicationFailure;
    expect(f.nonRetryable).toBe(true);
    expect(f.type).toBe(type);
  });

  it('context length and content filter get their own types', () => {
    expect(
      (
        mapLlmError(
          apiError(400, "This model's maximum context length is 8192 tokens", {}, 'context_length_exceeded'),
          'm',
        ) as ApplicationFailure
      ).type,
    ).toBe('LlmContextLength');
    expect((mapLlmError(apiError(400, 'blocked by content filter', {}, 'content_filter'), 'm') as ApplicationFailure).type).toBe(
      'LlmContentFilter',
    );
  });

  it('5xx and timeouts stay retryable plain errors', () => {
    const e500 = mapLlmError(apiError(503, 'overloaded'), 'm');
    expect(e500).not.toBeInstanceOf(ApplicationFailure);
    expect(e500.message).toMatch(/503/);
    expect(mapLlmError(new APIConnectionTimeoutError(), 'm')).not.toBeInstanceOf(ApplicationFailure);
  });
});

describe('estimateCostUsd', () => {
  it('prices tokens per million, zero for unknown models', () => {
    expect(estimateCostUsd({ m: { input: 2.5, output: 10 } }, 'm', 1000, 500)).toBe(0.0075);
    expect(estimateCostUsd({}, 'other', 1000, 500)).toBe(0);
  });
});
