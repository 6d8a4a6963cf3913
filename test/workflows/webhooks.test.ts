// Webhooks: a run with options.webhook tells a receiver when its plan needs a review and when its
// report is ready, each delivery signed with WEBHOOK_SECRET and retried, with the same delivery id,
// after the receiver answers 500; a receiver that refuses (410) fails that delivery only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResearchService } from '../../src/api/research-service';
import type { ResearchResult } from '../../src/shared/schemas';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());
const SECRET = 'test-webhook-secret-0123456789';

interface Delivery {
  path: string;
  event: string;
  id: string;
  verified: boolean;
  body: { id: string; event: string; researchId: string; data: Record<string, unknown> };
  answered: number;
}

/** A receiver that checks each signature as a client would, and answers 500 to the first attempt
 *  of every delivery on /flaky, 410 on /gone, 200 otherwise. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const sig = String(req.headers['deep-research-signature'] ?? '');
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig);
      const expected = m ? createHmac('sha256', SECRET).update(`${m[1]}.${raw}`).digest() : Buffer.alloc(0);
      const fresh = m ? Math.abs(Date.now() / 1000 - Number(m[1])) < 300 : false;
      const verified = Boolean(m) && fresh && timingSafeEqual(expected, Buffer.from(m![2]!, 'hex'));
      const id = String(req.headers['deep-research-delivery']);
      const seen = this.deliveries.filter((d) => d.id === id).length;
      const answered = req.url === '/gone' ? 410 : req.url === '/flaky' && seen === 0 ? 500 : 200;
      this.deliveries.push({
        path: req.url!,
        event: String(req.headers['deep-research-event']),
        id,
        verified,
        body: JSON.parse(raw),
        answered,
      });
      res.writeHead(answered).end();
    });
  });
  url = '';
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function until<T>(what: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!ready)(`webhooks (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await new Receiver().start();
    h = await startHarness({ env: { WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_HOSTS: new URL(receiver.url).host } });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('signs review_needed and report_ready, and retries a delivery the receiver answered 500', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Is solar cheaper than wind?', options: { webhook: { url: `${receiver.url}/flaky` } } })
      .expect(202);
    const id = res.body.id as string;
    const review = await until(() => receiver.deliveries.find((d) => d.event === 'review_needed' && d.answered === 200));
    const attempts = receiver.deliveries.filter((d) => d.id === review.id);
    expect(attempts.map((d) => d.answered)).toEqual([500, 200]);
    expect(attempts.every((d) => d.verified)).toBe(true);
    expect(review.id).toBe(`${id}/webhook/review_needed-1`);
    expect(review.body).toMatchObject({ event: 'review_needed', researchId: id, data: { planVersion: 1, steps: [{ id: 'a' }] } });
    const delivery = await h.client.workflow.getHandle(review.id).result();
    expect(delivery).toEqual({ status: 200, attempt: 2 });

    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const ready = await until(() => receiver.deliveries.find((d) => d.event === 'report_ready' && d.answered === 200));
    expect(ready.verified).toBe(true);
    expect(ready.body).toMatchObject({ researchId: id, data: { outcome: 'report' } });
    recordHistories([
      [id, 'webhooks.json'],
      [review.id, 'webhook-delivery.json'],
    ]);
  });

  it('fails only the delivery a receiver refuses; the run reports as usual', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({
        question: 'Wind or solar?',
        options: { autoAcceptPlan: true, webhook: { url: `${receiver.url}/gone`, events: ['report_ready'] } },
      })
      .expect(202);
    const id = res.body.id as string;
    expect(((await h.client.workflow.getHandle(id).result()) as ResearchResult).outcome).toBe('report');
    await expect(h.client.workflow.getHandle(`${id}/webhook/report_ready`).result()).rejects.toThrow();
    const sent = receiver.deliveries.filter((d) => d.body.researchId === id);
    expect(sent.map((d) => [d.event, d.answered])).toEqual([['report_ready', 410]]);
  });

  it('refuses a webhook the server cannot sign or whose URL is private', async () => {
    const blocked = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Q?', options: { webhook: { url: 'http://10.1.2.3/hook' } } })
      .expect(400);
    expect(blocked.body.error).toMatchObject({ code: 'invalid_webhook' });
    await request(h.app)
      .post('/v1/research')
      .send({ question: 'Q?', options: { webhook: { url: 'ftp://example.com/hook' } } })
      .expect(400);
    const unsigned = createResearchService({ client: h.client, taskQueue: 'unused', store: {} as never });
    await expect(
      unsigned.start({ question: 'Q?', options: { webhook: { url: 'https://example.com/hook' } } }, 'default'),
    ).rejects.toMatchObject({
      status: 400,
      code: 'webhooks_disabled',
    });
  });
});
