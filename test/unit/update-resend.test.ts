// A message to a run (plan review, clarification, steering) goes as an update. When the workflow task
// meant to take it fails or times out before the update is accepted, Temporal drops it with
// FAILED_PRECONDITION "... unexpected workflow task failure" (seen under load in the OpenAPI fuzz
// pass, answered with a 503): nothing was applied, so the API sends it again within its wait.
import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { sendWhileAborted } from '../../src/api/research/messages';

/** The error the client gives for that answer: the gRPC status as the cause of a ServiceError. */
const aborted = () =>
  new ServiceError('Failed to update workflow', {
    cause: Object.assign(
      new Error('9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.'),
      { code: 9 },
    ),
  });

describe('sending an update Temporal aborted', () => {
  it('sends it again until it is answered', async () => {
    let sent = 0;
    const answer = await sendWhileAborted(async () => {
      sent++;
      if (sent < 3) throw aborted();
      return { accepted: true };
    }, 10_000);
    expect(answer).toEqual({ accepted: true });
    expect(sent).toBe(3);
  });

  it('gives up with the abort when the wait runs out', async () => {
    let sent = 0;
    const started = Date.now();
    await expect(
      sendWhileAborted(async () => {
        sent++;
        throw aborted();
      }, 1_000),
    ).rejects.toThrow(/Failed to update workflow/);
    expect(sent).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('does not send again on any other error, nor on a timeout of its own', async () => {
    let sent = 0;
    await expect(
      sendWhileAborted(async () => {
        sent++;
        throw new ServiceError('Failed to update workflow', { cause: new Error('5 NOT_FOUND: workflow not found') });
      }, 10_000),
    ).rejects.toThrow(/Failed to update workflow/);
    expect(sent).toBe(1);
    sent = 0;
    await expect(sendWhileAborted(() => (sent++, new Promise<never>(() => {})), 300)).rejects.toThrow(/no answer in/);
    expect(sent).toBe(1);
  });
});
