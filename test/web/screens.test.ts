// The page's other screens in a real browser (Debian's chromium through playwright-core) against
// the live harness: a knowledge base (a DOCX by the file picker, a PDF dropped on the page, both
// ready, their passages, the search box), a session whose question is answered from them with
// citations and a follow-up, one's own keys with one revoked, a python run with its chart in the timeline; and
// axe-core on each screen.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/api/auth';
import { apiKeysTable } from '../../src/activities/store/keys';
import { DOCX_FACTS, PDF_FACTS, makeDocx, makePdf } from '../support/kb-fixtures';
import { bySchema, type ChatRequest, type Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { dockerAvailable } from '../support/services';
import { noSeriousAxeProblems, shot, startWebHarness, webReady, webState, type WebHarness, type WebPage } from '../support/web-page';

const ACME = 'acme-screens-key-0123456789';

/** A reporter that cites every reference of the knowledge base (their lines link to /documents/). */
const citingDocuments = (req: ChatRequest): Reply => {
  const refs = [...userText(req).matchAll(/^\[(\d+)\] (.*)$/gm)].filter((m) => /\/documents\//.test(m[2]!)).map((m) => `[${m[1]}]`);
  return {
    json: { title: 'Grid storage', markdown: `## Key points\n\n- Lake Veyra holds 412 MW and packs cost 212 EUR/kWh ${refs.join('')}.\n` },
  };
};
/** A researcher that searches the knowledge base once, then answers. */
const kbReact = (req: ChatRequest): Reply =>
  req.messages.some((m) => m.role === 'tool')
    ? { content: 'I have what I need.' }
    : { toolCalls: [{ name: 'knowledge_search', arguments: { query: 'Lake Veyra capacity and battery pack cost per kWh' } }] };

/** A researcher that plots the figures with the python tool once, then answers. */
const pythonReact = (req: ChatRequest): Reply =>
  req.messages.some((m) => m.role === 'tool')
    ? { content: 'The chart is made.' }
    : {
        toolCalls: [
          {
            name: 'python',
            arguments: {
              code: [
                'import matplotlib.pyplot as plt',
                "plt.plot([2010, 2016, 2022], [0.445, 0.129, 0.049], marker='o')",
                "plt.savefig('/output/lcoe.png', dpi=60)",
                "print('saved')",
              ].join('\n'),
            },
          },
        ],
      };

describe.skipIf(!webReady)(`the page's screens (${webState})`, () => {
  let h: WebHarness;

  beforeAll(async () => {
    h = await startWebHarness({ API_KEYS: `${ACME}=acme` });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  /** A page (CSP bypassed so axe can be injected) with the key entered once, loading nothing from anywhere but this server. */
  const signedIn = (key: string): Promise<WebPage> => h.signedIn(key, { onlyThisServer: true });

  let collectionId = '';

  /** Waits for `what`; when it does not come, says where the page's run is (status, phase, what it waits for). */
  async function orSayWhy(page: WebPage, what: Promise<void>): Promise<void> {
    await what.catch(async (err: Error) => {
      const id = decodeURIComponent(page.url().split('#/run/')[1] ?? '');
      const run = id ? await request(h.app).get(`/v1/research/${id}`).set('Authorization', `Bearer ${ACME}`) : undefined;
      const timeline = await page
        .locator('.timeline')
        .textContent()
        .catch(() => '');
      throw new Error(`${err.message}\nrun ${id}: ${JSON.stringify(run?.body).slice(0, 1_000)}\ntimeline: ${timeline?.slice(-1_500)}`);
    });
  }

  it('knowledge base: creates a collection, uploads a DOCX by the picker and drops a PDF, sees both ready, reads passages, searches', async () => {
    const page = await signedIn(ACME);
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Knowledge base' }).click();
    await page.getByRole('heading', { name: 'New collection' }).waitFor();
    await noSeriousAxeProblems(page, 'collections');
    await page.getByLabel('Name').fill('Grid storage');
    await page.getByLabel(/^Description/).fill('Fact sheets and handbooks about grid storage plants');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('heading', { name: 'Grid storage' }).waitFor();
    collectionId = decodeURIComponent(page.url().split('#/kb/')[1]!);
    expect(collectionId).toMatch(/^C[0-9a-f]{16}$/);

    await page.getByLabel('Choose files').setInputFiles({
      name: 'handbook.docx',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      buffer: await makeDocx(),
    });
    // The PDF as a person drags it from their desktop: a drop event carrying the file.
    const pdf = (await makePdf()).toString('base64');
    const transfer = await page.evaluateHandle((b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'veyra.pdf', { type: 'application/pdf' }));
      return dt;
    }, pdf);
    await page.locator('.drop').dispatchEvent('dragover', { dataTransfer: transfer });
    await page.locator('.drop').dispatchEvent('drop', { dataTransfer: transfer });

    const uploads = page.getByRole('list', { name: 'Uploads' });
    await uploads.getByRole('listitem').filter({ hasText: 'handbook.docx' }).getByText('ready').waitFor({ timeout: 60_000 });
    await uploads.getByRole('listitem').filter({ hasText: 'veyra.pdf' }).getByText('ready').waitFor({ timeout: 60_000 });
    const stored = await request(h.app).get(`/v1/collections/${collectionId}/documents`).set('Authorization', `Bearer ${ACME}`).expect(200);
    expect(stored.body.documents.map((d: { status: string }) => d.status)).toEqual(['ready', 'ready']);

    await page.getByRole('button', { name: new RegExp(`^(${PDF_FACTS.title}|veyra\\.pdf)$`) }).click();
    await page.locator('.runs .passages').getByText(PDF_FACTS.page2).waitFor();
    await page.getByRole('button', { name: /^(Grid Storage Handbook|handbook\.docx)$/ }).click();
    await page.locator('.runs .passages').getByText(DOCX_FACTS.costs).waitFor();
    await page.getByLabel('Words or a question').fill('pumped-storage capacity megawatts');
    await page.getByRole('button', { name: 'Search passages' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /passages? for/ })
      .getByText(PDF_FACTS.page1)
      .waitFor();
    await noSeriousAxeProblems(page, 'collection');
    await shot(page, 'kb');
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 150_000);

  it('sessions: asks in a new session with the collection, reads a report citing the documents, asks a follow-up', async () => {
    expect(collectionId, 'the knowledge base test made the collection').not.toBe('');
    h.llm.script([
      // The follow-up names no collection: the run picks the one whose description fits.
      {
        name: 'router',
        match: bySchema('KnowledgeChoice'),
        reply: { json: { collectionIds: [collectionId], reason: 'It is about grid storage.' } },
      },
      ...researchRules({ react: kbReact, reporter: citingDocuments }, planJson([{ id: 'a' }])),
    ]);
    const page = await signedIn(ACME);
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('heading', { name: 'New session' }).waitFor();
    await page.getByLabel('Title').fill('Storage questions');
    await page.getByRole('button', { name: 'Start a session' }).click();
    await page.getByRole('heading', { name: 'Ask the first question' }).waitFor();
    const sessionUrl = page.url();
    await noSeriousAxeProblems(page, 'session');
    await page.getByRole('textbox', { name: 'Question', exact: true }).fill('How big is Lake Veyra and what do battery packs cost?');
    await page.getByRole('checkbox', { name: 'Grid storage' }).check();
    await page.getByRole('button', { name: 'Ask in this session' }).click();
    const report = page.getByRole('article', { name: 'Report' });
    await orSayWhy(page, report.waitFor({ timeout: 90_000 }));
    // The references are the uploaded documents, linked to them in the API.
    const refs = await report.locator(`a[href*="/v1/collections/${collectionId}/documents/"]`).allTextContents();
    expect(refs.join(' | ')).toContain(PDF_FACTS.title);
    expect(refs.join(' | ')).toMatch(/Grid Storage Handbook|handbook/i);

    await page.goto(sessionUrl);
    await page.getByRole('heading', { name: 'Ask a follow-up question' }).waitFor();
    await page.getByText('Report: Grid storage').waitFor();
    await page.getByRole('textbox', { name: 'Question', exact: true }).fill('And how efficient is it?');
    await page.getByRole('button', { name: 'Ask in this session' }).click();
    await page.getByRole('article', { name: 'Report' }).waitFor({ timeout: 90_000 });
    await page.goto(sessionUrl);
    await page.getByRole('link', { name: 'And how efficient is it?' }).waitFor();
    expect(await page.locator('.session-runs li').count()).toBe(2);
    await shot(page, 'session');
    // The follow-up saw the session's earlier question.
    const later = h.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes('And how efficient is it?'));
    expect(later.some((r) => JSON.stringify(r.body.messages).includes('How big is Lake Veyra'))).toBe(true);

    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('link', { name: 'Storage questions' }).waitFor();
    await noSeriousAxeProblems(page, 'sessions');
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 240_000);

  it("keys: lists the tenant's stored keys, marks the one in use, revokes another", async () => {
    const table = apiKeysTable(h.pool);
    const tenant = `keys-${Date.now().toString(36)}`;
    const mine = generateKey();
    const spare = generateKey();
    // The page's key is an admin key of the tenant: it switches every key's memory (src/api/routes/keys.ts).
    await table.create({ id: mine.id, tenant, name: 'laptop', keyHash: hashKey(mine.key), admin: true });
    await table.create({ id: spare.id, tenant, name: 'old script', keyHash: hashKey(spare.key) });
    const other = generateKey();
    await table.create({ id: other.id, tenant: `${tenant}-other`, name: 'not yours', keyHash: hashKey(other.key) });
    try {
      await ownKeysScreen(mine, spare, other);
    } finally {
      // Live stored keys would close the open (keyless) API that other test files start.
      await h.pool.query('DELETE FROM api_keys WHERE tenant = $1 OR tenant = $2', [tenant, `${tenant}-other`]);
    }
  }, 60_000);

  type Key = ReturnType<typeof generateKey>;
  async function ownKeysScreen(mine: Key, spare: Key, other: Key): Promise<void> {
    const page = await signedIn(mine.key);
    await page.getByRole('link', { name: 'Keys' }).click();
    const rows = page.getByRole('row');
    await rows.filter({ hasText: 'old script' }).waitFor();
    expect(await rows.filter({ hasText: 'laptop' }).getByText('this page').count()).toBe(1);
    expect(await rows.filter({ hasText: 'laptop' }).getByText('live, admin').count()).toBe(1);
    expect(await rows.filter({ hasText: 'not yours' }).count()).toBe(0);
    await noSeriousAxeProblems(page, 'keys');
    await shot(page, 'keys');
    // User memory off for one key, from the page: the stored key says so, and the API lists it.
    await page.getByRole('button', { name: `Turn off user memory for key ${spare.id}` }).click();
    await page.getByText(`Key ${spare.id} no longer uses or teaches user memory.`).waitFor();
    await page.getByRole('button', { name: `Turn on user memory for key ${spare.id}` }).waitFor();
    const listed = await request(h.app).get('/v1/keys/self').set('Authorization', `Bearer ${mine.key}`).expect(200);
    const memoryOf = (id: string) => (listed.body.keys as { id: string; memory: boolean }[]).find((k) => k.id === id)?.memory;
    expect([memoryOf(spare.id), memoryOf(mine.id)]).toEqual([false, true]);
    expect((await apiKeysTable(h.pool).ownerOf(hashKey(spare.key)))?.memory).toBe(false);
    // The key itself (not an admin key) cannot turn its memory back on.
    await request(h.app).patch(`/v1/keys/self/${spare.id}`).set('Authorization', `Bearer ${spare.key}`).send({ memory: true }).expect(403);
    // Another tenant's key cannot be switched; a body without the flag is refused.
    await request(h.app).patch(`/v1/keys/self/${other.id}`).set('Authorization', `Bearer ${mine.key}`).send({ memory: false }).expect(404);
    await request(h.app).patch(`/v1/keys/self/${spare.id}`).set('Authorization', `Bearer ${mine.key}`).send({}).expect(400);
    expect((await apiKeysTable(h.pool).ownerOf(hashKey(other.key)))?.memory).toBe(true);
    await page.getByRole('button', { name: `Revoke key ${spare.id}` }).click();
    await page.getByText(`Key ${spare.id} revoked: it stops working at once.`).waitFor();
    await rows
      .filter({ hasText: 'old script' })
      .getByText(/^revoked /)
      .waitFor();
    await request(h.app).get('/v1/research').set('Authorization', `Bearer ${spare.key}`).expect(401);
    await request(h.app).get('/v1/research').set('Authorization', `Bearer ${mine.key}`).expect(200);
    // Another tenant's key is not there to revoke.
    await request(h.app).delete(`/v1/keys/self/${other.id}`).set('Authorization', `Bearer ${mine.key}`).expect(404);
    await request(h.app).get('/v1/research').set('Authorization', `Bearer ${other.key}`).expect(200);
    expect(page.errors).toEqual([]);
    await page.context().close();
  }

  it.skipIf(!dockerAvailable())(
    'timeline: a python run shows as python with its chart',
    async () => {
      h.llm.script([
        {
          name: 'router',
          match: bySchema('KnowledgeChoice'),
          reply: { json: { collectionIds: [], reason: 'No collection is about this.' } },
        },
        ...researchRules({ react: pythonReact }, planJson([{ id: 'a' }])),
      ]);
      const page = await signedIn(ACME);
      await page.getByLabel('Question', { exact: true }).fill('Plot the solar cost figures');
      await page.getByText('Review, budget and language').click();
      await page.getByRole('checkbox', { name: /without waiting for my review/ }).check();
      await page.getByRole('button', { name: 'Start research' }).click();
      await orSayWhy(page, page.getByText(/Run (completed|failed)/).waitFor({ timeout: 150_000 }));
      expect(await page.locator('.timeline').textContent()).toMatch(/Step a ran Python: ok, [1-9]\d* files? kept/);
      const python = page.locator('.timeline li.python');
      const chart = python.getByRole('img', { name: 'Chart from Python: lcoe.png' });
      await chart.waitFor({ timeout: 15_000 });
      expect(await chart.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(10);
      await noSeriousAxeProblems(page, 'run with python');
      await python.first().scrollIntoViewIfNeeded();
      await shot(page, 'python');
      expect(page.errors).toEqual([]);
      await page.context().close();
    },
    200_000,
  );
});
