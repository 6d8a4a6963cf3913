// A research run started through the harness's API and left waiting for its plan's review.
import request from 'supertest';
import type { WorkflowHandle } from '@temporalio/client';
import type { Harness } from './harness';

/** Starts a run (the harness's model script answers it) and waits, at most 20 s, until its row
 *  shows the plan under review: the row's write (a local activity) follows the phase change, so the
 *  workflow's query can show the review a moment before the row, and the API, does. */
export async function runAwaitingReview(h: Harness): Promise<{ id: string; handle: WorkflowHandle }> {
  const res = await request(h.app).post('/v1/research').send({ question: 'How much cheaper has solar power become?' }).expect(202);
  const id = res.body.id as string;
  const rowPhase = async () =>
    (await h.pool.query<{ phase: string | null }>(`SELECT final_view->>'phase' AS phase FROM research_runs WHERE id = $1`, [id])).rows[0]
      ?.phase;
  for (const end = Date.now() + 20_000; (await rowPhase()) !== 'reviewing';) {
    if (Date.now() > end) throw new Error('the plan never went to review');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { id, handle: h.client.workflow.getHandle(id) };
}
