// Text and requests a careless or hostile client sends, answered at the door with a 4xx and the
// reason instead of a 500 or a run that cannot be written: NUL and lone surrogates anywhere in a
// request, malformed % escapes, broken multipart bodies, garbage list cursors; names of any script
// stored as sent and downloadable; an Idempotency-Key bound to the request it was first used for.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`requests refused at the door (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `door-${randomUUID().slice(0, 8)}`;
  const as = (t: request.Test) => t.set('x-tenant-id', tenant);
  let collection: string;

  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
    collection = (await as(request(h.app).post('/v1/collections')).send({ name: 'Door' }).expect(201)).body.id;
  });
  afterAll(async () => {
    if (collection) await as(request(h.app).delete(`/v1/collections/${collection}`));
    await h?.pool.query('DELETE FROM idempotency_keys WHERE tenant = $1', [tenant]);
    await h?.close();
  });

  const json = (t: request.Test, raw: string) => as(t).set('content-type', 'application/json').send(raw);

  it.each([
    [
      'a NUL in the question',
      () => as(request(h.app).post('/v1/research')).send({ question: 'solar\u0000 costs' }),
      'body.question',
      /NUL/,
    ],
    [
      'a lone surrogate in the question',
      () => json(request(h.app).post('/v1/research'), '{"question":"solar \\ud800 costs"}'),
      'body.question',
      /surrogate/,
    ],
    [
      'a NUL in an option',
      () => as(request(h.app).post('/v1/research')).send({ question: 'q', options: { focus: 'a\u0000' } }),
      'body.options.focus',
      /NUL/,
    ],
    [
      'a NUL in a key of the body',
      () => json(request(h.app).post('/v1/research'), '{"question":"q","x\\u0000":1}'),
      'body.x\u0000',
      /name contains a NUL/,
    ],
    [
      'a NUL in steering guidance',
      () => as(request(h.app).post('/v1/research/research-none/steer')).send({ kind: 'guidance', text: 'go\u0000' }),
      'body.text',
      /NUL/,
    ],
    ['a NUL in a collection name', () => as(request(h.app).post('/v1/collections')).send({ name: 'c\u0000' }), 'body.name', /NUL/],
    [
      'a lone surrogate in a session title',
      () => json(request(h.app).post('/v1/sessions'), '{"title":"t\\udc00"}'),
      'body.title',
      /surrogate/,
    ],
    [
      'a NUL in a document URL body',
      () => as(request(h.app).post(`/v1/collections/${collection}/documents`)).send({ url: 'https://x.example/a', name: 'n\u0000' }),
      'body.name',
      /NUL/,
    ],
    ['a NUL in the query', () => as(request(h.app).get('/v1/research?q=a%00b')), 'query.q', /NUL/],
    ['a NUL in the path', () => as(request(h.app).get('/v1/collections/%00')), 'path', /NUL/],
  ])('refuses %s with 400 naming where it is, and starts nothing', async (_what, send, path, reason) => {
    const before = h.llm.requests.length;
    const res = await send().expect(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_text', details: { path } });
    expect(res.body.error.message).toMatch(reason);
    expect(h.llm.requests.length).toBe(before);
  });

  it('answers a malformed % escape in the path or in a document URL with a 4xx, never a 500', async () => {
    const inPath = await as(request(h.app).get(`/v1/collections/${collection}/documents/%zz`)).expect(400);
    expect(inPath.body.error.code).toBe('invalid_path');
    const inParam = await as(request(h.app).get('/v1/collections/%E2%82')).expect(400);
    expect(inParam.body.error.message).toMatch(/malformed % escape/);
    // A URL whose last segment does not decode is named as it is written.
    const url = `${h.site.url}/reports/%zz%E2.pdf`;
    const added = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .send({ url })
      .expect(202);
    expect(added.body.name).toBe('%zz%E2.pdf');
  });

  it('answers a broken multipart body with 400 invalid_upload', async () => {
    const boundary = 'door-boundary';
    const post = (body: string) =>
      as(request(h.app).post(`/v1/collections/${collection}/documents`))
        .set('content-type', `multipart/form-data; boundary=${boundary}`)
        .send(body);
    const truncated = await post(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf a fi`).expect(
      400,
    );
    expect(truncated.body.error.code).toBe('invalid_upload');
    expect(truncated.body.error.message).toMatch(/multipart body could not be read|Unexpected end/);
    const noParts = await post('not multipart at all').expect(400);
    expect(noParts.body.error.code).toBe('invalid_upload');
  });

  it('stores an upload name of any script as sent and downloads it with an RFC 6266/5987 header', async () => {
    const name = 'Bericht € 漢字 😀 "q".txt';
    const up = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .attach('file', Buffer.from('Grid storage prices fell in 2024.\n'), { filename: name, contentType: 'text/plain' })
      .expect(202);
    expect(up.body.name).toBe(name);
    const listed = await as(request(h.app).get(`/v1/collections/${collection}/documents/${up.body.id}`)).expect(200);
    expect(listed.body.name).toBe(name);
    const file = await as(request(h.app).get(`/v1/collections/${collection}/documents/${up.body.id}/file`)).expect(200);
    const header = String(file.headers['content-disposition']);
    expect(header).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''[A-Za-z0-9%!._~-]+$/);
    expect(header).not.toMatch(/filename="[^"]*"[^;]/); // the quoted fallback holds no quote of its own
    expect(decodeURIComponent(/filename\*=UTF-8''(.+)$/.exec(header)![1]!)).toBe(name);
    expect(file.text).toBe('Grid storage prices fell in 2024.\n');
    // A NUL in the form's name field is refused like one in JSON.
    const bad = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .field('name', 'x\u0000.txt')
      .attach('file', Buffer.from('text'), { filename: 'x.txt', contentType: 'text/plain' })
      .expect(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_text', details: { path: 'form.name' } });
  });

  it('refuses a list cursor it never gave out with 400 at once', async () => {
    for (const cursor of ['AAAA', Buffer.from('[1,2]').toString('base64url'), 'bm90IGpzb24']) {
      const started = Date.now();
      const res = await as(request(h.app).get('/v1/research')).query({ cursor }).expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it('binds an Idempotency-Key to its request: another action or body is a 409, a retry the first answer', async () => {
    const id = (await as(request(h.app).post('/v1/research')).send({ question: 'Heat pump prices in Europe' }).expect(202)).body
      .id as string;
    for (const end = Date.now() + 30_000; ;) {
      const s = await as(request(h.app).get(`/v1/research/${id}`)).expect(200);
      if (s.body.phase === 'reviewing') break;
      if (Date.now() > end) throw new Error(`run ${id} never reached its review: ${JSON.stringify(s.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const key = `door-${randomUUID()}`;
    const approve = (planVersion: number) =>
      as(request(h.app).post(`/v1/research/${id}/plan/approve`))
        .set('idempotency-key', key)
        .send({ planVersion });
    // A first use that is refused frees the key: the corrected request may take it.
    expect((await approve(7).expect(409)).body.error.code).toBe('stale_plan_version');
    let first: request.Response | undefined;
    for (const end = Date.now() + 5_000; !first;) {
      const res = await approve(1);
      if (res.status === 200) first = res;
      else if (res.body.error?.code !== 'idempotency_key_reused' || Date.now() > end)
        throw new Error(`approve: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(first.body).toEqual({ id, planVersion: 1, decision: 'approved' });
    const revise = await as(request(h.app).post(`/v1/research/${id}/plan/revise`))
      .set('idempotency-key', key)
      .send({ planVersion: 1, feedback: 'more on costs' })
      .expect(409);
    expect(revise.body.error).toMatchObject({ code: 'idempotency_key_reused', message: /another request/ });
    expect((await approve(2).expect(409)).body.error.code).toBe('idempotency_key_reused');
    // The same request again: the first answer.
    await approve(1).expect(200, first.body);
    // The same key on another route (a new run) is refused too; another tenant's key is its own.
    const submit = await as(request(h.app).post('/v1/research')).set('idempotency-key', key).send({ question: 'q' }).expect(409);
    expect(submit.body.error.code).toBe('idempotency_key_reused');
    await h.client.workflow.getHandle(id).result();
  });
});
