// The Memory screen in a real browser (Debian's chromium through playwright-core) against the live
// harness: the facts remembered about the page's key's user, each with the quote it came from; one
// corrected, one deleted (and gone from the API); another user's facts never shown; axe-core on it.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/api/auth';
import { createStore } from '../../src/activities/store';
import type { LearnedFact } from '../../src/shared/memory';
import { mergeFacts } from '../../src/shared/memory';
import { newFactId } from '../../src/activities/store/memory';
import { noSeriousAxeProblems, shot, startWebHarness, webReady, webState, type WebHarness } from '../support/web-page';

const TENANT = `memory-page-${Date.now().toString(36)}`;
const KEY = 'memory-page-key-0123456789abcdef';
/** The default user of a key from API_KEYS: a prefix of its hash (src/api/auth.ts). */
const ME = `env-${hashKey(KEY).slice(0, 12)}`;

const fact = (text: string, category: LearnedFact['category'], quote: string, researchId = 'research-page-1'): LearnedFact => ({
  category,
  text,
  evidence: [{ researchId, kind: 'question', quote, at: '2026-11-01T09:00:00.000Z' }],
});

describe.skipIf(!webReady)(`the memory screen (${webState})`, () => {
  let h: WebHarness;

  beforeAll(async () => {
    h = await startWebHarness({ API_KEYS: `${KEY}=${TENANT}` });
  }, 60_000);
  afterAll(async () => {
    if (h) await createStore(h.pool).memory.purge(TENANT);
    await h?.close();
  });

  it("lists the key's user's facts with their quotes, corrects one and deletes another", async () => {
    const memory = createStore(h.pool).memory;
    const teach = (userId: string, learned: LearnedFact[]) =>
      memory.learn({ tenant: TENANT, userId }, (known) => mergeFacts(known, learned, new Date().toISOString(), newFactId));
    await teach(ME, [
      fact('The user is a hydrologist.', 'field', 'As a hydrologist'),
      fact('The user prefers peer-reviewed sources.', 'sources', 'I prefer peer-reviewed sources'),
    ]);
    await teach('someone-else', [fact('The user is a baker.', 'field', 'As a baker')]);

    const page = await h.signedIn(KEY);
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();

    const facts = page.locator('.facts > li');
    await facts.filter({ hasText: 'The user is a hydrologist.' }).waitFor();
    expect(await facts.count()).toBe(2);
    await page
      .getByRole('list', { name: 'Where “The user is a hydrologist.” comes from' })
      .getByText('“As a hydrologist” — your question')
      .waitFor();
    expect(await page.locator('main').textContent()).not.toContain('baker');

    await noSeriousAxeProblems(page, 'memory');
    await shot(page, 'memory');

    // Correct the field fact, then delete the sources fact.
    await page.getByRole('button', { name: 'Edit “The user is a hydrologist.”' }).click();
    await page.getByLabel('Fact', { exact: true }).fill('The user is a hydrogeologist.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Fact corrected.').waitFor();
    await facts.filter({ hasText: 'The user is a hydrogeologist.' }).waitFor();
    await page.getByRole('button', { name: 'Delete “The user prefers peer-reviewed sources.”' }).click();
    await page.getByRole('status').getByText('Fact deleted.').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.facts > li').length === 1);

    const stored = await request(h.app).get('/v1/memory').set('Authorization', `Bearer ${KEY}`).expect(200);
    expect(stored.body.userId).toBe(ME);
    expect(stored.body.facts.map((f: { text: string }) => f.text)).toEqual(['The user is a hydrogeologist.']);
    // The other user's fact is untouched.
    const other = await request(h.app)
      .get('/v1/memory')
      .query({ userId: 'someone-else' })
      .set('Authorization', `Bearer ${KEY}`)
      .expect(200);
    expect(other.body.facts.map((f: { text: string }) => f.text)).toEqual(['The user is a baker.']);
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('leaves memory out of one run when the asker clears its box, as the screen says', async () => {
    const page = await h.signedIn(KEY);
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByText(/clear “Use and add to what runs remember about me”/).waitFor();
    await page.getByRole('link', { name: 'deep-research' }).click();
    await page.getByLabel('Question', { exact: true }).fill('Which aquifers recharge fastest?');
    await page.getByText('Review, budget and language').click();
    const box = page.getByRole('checkbox', { name: 'Use and add to what runs remember about me (the Memory screen)' });
    expect(await box.isChecked()).toBe(true);
    await box.uncheck();
    const sent = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v1/research');
    await page.getByRole('button', { name: 'Start research' }).click();
    const body = (await sent).postDataJSON() as { options: Record<string, unknown> };
    expect(body.options).toMatchObject({ memory: false });
    // The run itself is not this test's: cancelled.
    const { id } = (await (await (await sent).response())!.json()) as { id: string };
    await request(h.app).post(`/v1/research/${id}/cancel`).set('Authorization', `Bearer ${KEY}`).expect(202);
    await page.context().close();
  }, 60_000);
});
