// The Idempotency-Key binding on its own (a table in memory, an app of two routes): a retry of the
// same request passes to the handler, whatever order its body's fields come in; the key with another
// body or on another route is a 409 before any handler runs; a refused first use frees the key.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bindIdempotencyKey, useIdempotencyKeys, type IdempotencyKeys } from '../../src/api/idempotency';
import { errorHandler } from '../../src/api/middleware/errors';
import type { KeyClaim } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';

function memoryKeys(): IdempotencyKeys & { rows: Map<string, string> } {
  const rows = new Map<string, string>();
  return {
    rows,
    async claim(tenant, key, hash): Promise<KeyClaim> {
      const k = `${tenant}\u0000${key}`;
      const held = rows.get(k);
      if (held === undefined) {
        rows.set(k, hash);
        return 'new';
      }
      return held === hash ? 'same' : 'other';
    },
    async release(tenant, key, hash) {
      if (rows.get(`${tenant}\u0000${key}`) === hash) rows.delete(`${tenant}\u0000${key}`);
    },
  };
}

function app(keys: IdempotencyKeys) {
  const a = express();
  useIdempotencyKeys(a, keys);
  a.use(express.json());
  a.use((req, res, next) => {
    res.locals.tenant = req.get('x-tenant-id') ?? 'default';
    next();
  });
  const handled: string[] = [];
  const approve = { method: 'post', path: '/runs/:id/approve' };
  const revise = { method: 'post', path: '/runs/:id/revise' };
  a.post(approve.path, bindIdempotencyKey(approve), (req, res) => {
    handled.push(`approve ${req.params.id}`);
    if (req.body.planVersion !== 1) return void res.status(409).json({ error: { code: 'stale_plan_version' } });
    res.json({ decision: 'approved' });
  });
  a.post(revise.path, bindIdempotencyKey(revise), (req, res) => {
    handled.push(`revise ${req.params.id}`);
    res.json({ decision: 'revising' });
  });
  a.use(errorHandler(createLogger('error')));
  return { app: a, handled };
}

describe('Idempotency-Key bound to its request', () => {
  it('lets the same request through, refuses another body, route or path parameter with 409', async () => {
    const keys = memoryKeys();
    const { app: a, handled } = app(keys);
    const post = (path: string, body: string, key = 'k1', tenant = 't1') =>
      request(a).post(path).set('idempotency-key', key).set('x-tenant-id', tenant).set('content-type', 'application/json').send(body);

    await post('/runs/r1/approve', '{"planVersion":1,"note":"ok"}').expect(200);
    await post('/runs/r1/approve', '{"note":"ok","planVersion":1}').expect(200);
    expect(handled).toEqual(['approve r1', 'approve r1']);
    const otherBody = await post('/runs/r1/approve', '{"planVersion":1,"note":"changed"}').expect(409);
    expect(otherBody.body.error.code).toBe('idempotency_key_reused');
    await post('/runs/r1/revise', '{"planVersion":1,"note":"ok"}').expect(409);
    await post('/runs/r2/approve', '{"planVersion":1,"note":"ok"}').expect(409);
    expect(handled).toHaveLength(2);
    // Keys are per tenant; without a key nothing is bound.
    await post('/runs/r1/revise', '{}', 'k1', 't2').expect(200);
    await request(a).post('/runs/r1/revise').send({}).expect(200);
    await post('/runs/r1/approve', '{}', 'x'.repeat(201)).expect(400);
  });

  it('frees the key of a refused first use for the corrected request', async () => {
    const keys = memoryKeys();
    const { app: a } = app(keys);
    const approve = (planVersion: number) => request(a).post('/runs/r1/approve').set('idempotency-key', 'k2').send({ planVersion });
    await approve(7).expect(409);
    for (let i = 0; i < 50 && keys.rows.size; i++) await new Promise((r) => setTimeout(r, 10));
    expect(keys.rows.size).toBe(0);
    await approve(1).expect(200);
    await approve(7)
      .expect(409)
      .expect((res) => expect(res.body.error.code).toBe('idempotency_key_reused'));
  });
});
