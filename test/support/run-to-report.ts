// A run of the scripted question on the harness, auto-approved, that ends with a report.
import request from 'supertest';
import { expect } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { Harness } from './harness';

/** A run of the scripted question, auto-approved, that ends with a report; its start's response. */
export async function runToReport(h: Harness) {
  const res = await request(h.app)
    .post('/v1/research')
    .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true } })
    .expect(202);
  const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
  expect(result.outcome).toBe('report');
  return res;
}
