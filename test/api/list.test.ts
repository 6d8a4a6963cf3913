// The run list: a tenant's runs from Temporal's visibility (running ones first, then ended ones,
// most recently ended first), filtered by status and by
// words of the question, paginated with a cursor; another tenant's runs never appear.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`run list (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `list-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
  });
  afterAll(async () => h?.close());

  const list = (query: Record<string, string | number> = {}, as = tenant) =>
    request(h.app).get('/v1/research').set('x-tenant-id', as).query(query);

  /** Visibility is eventually consistent: asks until the answer satisfies `ok`. */
  async function listUntil(query: Record<string, string | number>, ok: (ids: string[]) => boolean): Promise<string[]> {
    for (const end = Date.now() + 20_000; ;) {
      const res = await list(query).expect(200);
      const ids = (res.body.runs as { id: string }[]).map((r) => r.id);
      if (ok(ids)) return ids;
      if (Date.now() > end) throw new Error(`list ${JSON.stringify(query)} never matched: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('lists running runs first, then the most recently ended; filters by status and question words; pages with a cursor', async () => {
    const submit = async (question: string, options: Record<string, unknown>) =>
      (await request(h.app).post('/v1/research').set('x-tenant-id', tenant).send({ question, options }).expect(202)).body.id as string;
    const solar = await submit('Solar costs in Spain', { autoAcceptPlan: true });
    await h.client.workflow.getHandle(solar).result();
    const battery = await submit('Battery storage prices', { autoAcceptPlan: true });
    await h.client.workflow.getHandle(battery).result(); // ended after solar: listed before it
    const wind = await submit('Wind power in Denmark', {});

    expect(await listUntil({}, (ids) => ids.length === 3)).toEqual([wind, battery, solar]);
    const all = await list().expect(200);
    expect(all.body.runs[0]).toMatchObject({ id: wind, question: 'Wind power in Denmark', startedAt: expect.any(String) });
    expect(await listUntil({ status: 'awaiting_review' }, (ids) => ids.length === 1)).toEqual([wind]);
    expect(await listUntil({ status: 'completed' }, (ids) => ids.length === 2)).toEqual([battery, solar]);
    expect(await listUntil({ q: 'battery' }, (ids) => ids.length === 1)).toEqual([battery]);
    // Case and punctuation do not matter on any visibility store (PostgreSQL's keeps both as given).
    expect(await listUntil({ q: 'PRICES?' }, (ids) => ids.length === 1)).toEqual([battery]);
    const done = await list({ status: 'completed' }).expect(200);
    expect(done.body.runs[0]).toMatchObject({ status: 'completed', phase: 'done', closedAt: expect.any(String) });

    const page1 = await list({ limit: 2 }).expect(200);
    expect(page1.body.runs.map((r: { id: string }) => r.id)).toEqual([wind, battery]);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await list({ limit: 2, cursor: page1.body.nextCursor }).expect(200);
    expect(page2.body.runs.map((r: { id: string }) => r.id)).toEqual([solar]);
    expect(page2.body.nextCursor).toBeUndefined();

    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list({ since: future }).expect(200)).body.runs).toEqual([]);
    expect((await list({}, `${tenant}-other`).expect(200)).body.runs).toEqual([]);
    await request(h.app).post(`/v1/research/${wind}/cancel`).set('x-tenant-id', tenant).expect(202);
  });

  it.each([
    [{ status: 'sleeping' }, /status: /],
    [{ since: 'yesterday' }, /since must be an ISO 8601 date-time/],
    [{ limit: 0 }, /limit: /],
    [{ colour: 'red' }, /Unrecognized key.*colour/],
  ])('rejects %j with 400 naming the parameter', async (query, message) => {
    const res = await list(query).expect(400);
    expect(res.body.error.message).toMatch(message);
  });
});
