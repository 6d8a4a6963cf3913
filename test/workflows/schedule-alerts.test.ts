// Alerts that mean something: a schedule with notify "on_change" runs four times over a web that
// changes once, between the second and third run (a new page with a newer figure appears in the
// search results). The receiver hears report_ready exactly once, from the third run, and the
// delivery names the new page and the figure that moved. The first run has nothing to compare
// with, the second finds nothing new (the change the model names is not borne out by what it
// cited), and the fourth's comparison gets no usable answer from the model: it claims no change
// and calls nobody. The schedule's recent runs and each run's status carry what its report found.
// A schedule with the default notify ("always") calls report_ready after every run.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceIdFor } from '../../src/activities/search/sources';
import type { ReportJson, ScheduleView } from '../../src/api/contract';
import type { RunChanges } from '../../src/shared/changes';
import type { ResearchView } from '../../src/shared/messages';
import type { ResearchResult } from '../../src/shared/schemas';
import { bySchema } from '../support/llm-server';
import { recordHistories } from '../support/record-history';
import { planJson, researchRules, searchResults, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const SECRET = 'test-alerts-secret-0123456789abcdef';
const NEW_PAGE = '/articles/solar-alerts-2025.html';
const NEW_TITLE = 'Solar prices in 2025';

interface Delivery {
  id: string;
  event: string;
  body: { researchId: string; event: string; data: Record<string, unknown> };
}

/** A receiver that keeps every delivery it is sent and answers 200. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  url = '';
  private server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      this.deliveries.push({
        id: String(req.headers['deep-research-delivery']),
        event: String(req.headers['deep-research-event']),
        body: JSON.parse(raw),
      });
      res.writeHead(200).end();
    });
  });
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function until<T>(what: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!ready)(`schedule alerts (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let receiver: Receiver;
  const made: string[] = [];
  beforeAll(async () => {
    receiver = await new Receiver().start();
    h = await startHarness({
      env: { WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_HOSTS: new URL(receiver.url).host, SCHEDULE_MIN_INTERVAL: '1s' },
    });
    h.site.route(NEW_PAGE, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>${NEW_TITLE}</title></head><body><article><h1>${NEW_TITLE}</h1>` +
          '<p>Solar LCOE fell 92% from 2010 to 2025, according to the latest figures.</p></article></body></html>',
      );
    });
  });
  afterAll(async () => {
    for (const id of made) await request(h.app).delete(`/v1/schedules/${id}`);
    await h?.close();
    await receiver?.close();
  });

  /** Creates a paused schedule (it runs only when triggered) whose runs call the receiver. */
  async function schedule(path: string, notify?: 'on_change'): Promise<string> {
    const res = await request(h.app)
      .post('/v1/schedules')
      .send({
        question: 'How far have solar costs fallen this year?',
        cron: '0 6 * * 1',
        paused: true,
        ...(notify ? { notify } : {}),
        options: { webhook: { url: `${receiver.url}${path}`, events: ['report_ready'] } },
      })
      .expect(201);
    const view = res.body as ScheduleView;
    made.push(view.id);
    return view.id;
  }

  /** Starts a run now and waits for it to end; answers its id. */
  // A triggered run's workflow id ends with the second the server started it in, and a run of the
  // scripted model can end within that second: a trigger in the same second then starts a run under
  // the same id (the first one has ended, so Temporal allows it). The server may start a run a while
  // after the trigger was sent (a loaded machine: run L6 saw two runs under one id when the wait
  // counted from the trigger), never after the run ended: each trigger waits for the second after
  // the previous run's end.
  let lastEnd = 0;
  async function runOnce(id: string, n: number): Promise<string> {
    const nextSecond = (Math.floor(lastEnd / 1000) + 1) * 1000;
    if (Date.now() < nextSecond) await new Promise((r) => setTimeout(r, nextSecond - Date.now() + 20));
    await request(h.app).post(`/v1/schedules/${id}/trigger`).expect(202);
    const run = await until(async () => {
      const s = (await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView;
      return s.recentRuns.length === n ? s.recentRuns[0]!.id : undefined;
    });
    expect(((await h.client.workflow.getHandle(run).result()) as ResearchResult).outcome).toBe('report');
    lastEnd = Date.now();
    return run;
  }

  /** True when the run started a report_ready delivery (its delivery workflow exists). */
  async function delivered(run: string): Promise<boolean> {
    try {
      await h.client.workflow.getHandle(`${run}/webhook/report_ready`).describe();
      return true;
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') return false;
      throw err;
    }
  }

  it('on_change: of four runs over a web that changes once, only the one that saw the change calls the webhook, naming it', async () => {
    const newUrl = `${h.site.url}${NEW_PAGE}`;
    const newId = sourceIdFor(newUrl);
    let mumble = false;
    h.llm.script([
      {
        name: 'extract-new-page',
        match: (r) => bySchema('PageExtract')(r) && userText(r).includes(NEW_PAGE),
        reply: { json: { relevant: true, evidence: 'Solar LCOE fell 92% from 2010 to 2025.', summary: 'Solar fell further.' } },
      },
      ...researchRules(
        {
          reporter: (req) => {
            const newer = new RegExp(`^\\[(\\d+)\\][^\\n]*${NEW_PAGE.replace(/[.]/g, '\\.')}`, 'm').exec(userText(req))?.[1];
            const markdown = `## Key points\n\n- Costs fell sharply: solar LCOE fell 89% from 2010 to 2022 [1].\n- Batteries too [2].${newer ? `\n- Newer figures [${newer}].` : ''}`;
            return { json: { title: 'Solar costs', markdown } };
          },
          // The model names the same change every time; code keeps it only where the run cites
          // the source it names and both figures are written where they should be.
          changes: () =>
            mumble
              ? { content: 'nothing to say' }
              : {
                  json: {
                    changes: [
                      {
                        about: 'Solar cost decline',
                        before: 'Solar LCOE fell 89% from 2010 to 2022',
                        now: 'Solar LCOE fell 92% from 2010 to 2025',
                        source: newId,
                      },
                    ],
                  },
                },
        },
        planJson([{ id: 'a' }]),
      ),
    ]);
    const id = await schedule('/on-change', 'on_change');
    expect(((await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView).notify).toBe('on_change');

    const first = await runOnce(id, 1);
    const second = await runOnce(id, 2);
    // The web changes: a newer page leads the search results.
    h.search.setFallback((q) => [
      { url: newUrl, title: NEW_TITLE, content: 'Facts for step a. Solar LCOE fell 92% from 2010 to 2025.' },
      ...searchResults(h.site.url)(q),
    ]);
    const third = await runOnce(id, 3);
    mumble = true;
    const fourth = await runOnce(id, 4);
    expect(new Set([first, second, third, fourth]).size).toBe(4);

    // Exactly one delivery, from the third run, naming the new page and the figure that moved.
    const alert = await until(() => receiver.deliveries.find((d) => d.body.researchId === third));
    expect(await Promise.all([first, second, third, fourth].map(delivered))).toEqual([false, false, true, false]);
    const mine = receiver.deliveries.filter((d) => [first, second, third, fourth].includes(d.body.researchId));
    expect(mine).toHaveLength(1);
    expect(alert.event).toBe('report_ready');
    const changes = alert.body.data.changes as RunChanges;
    expect(changes).toMatchObject({ previousId: second, newSourceCount: 1, changedClaimCount: 1, claimsCompared: true });
    expect(changes.newSources).toEqual([{ title: NEW_TITLE, url: newUrl }]);
    expect(changes.changedClaims).toEqual([
      {
        about: 'Solar cost decline',
        before: 'Solar LCOE fell 89% from 2010 to 2022',
        now: 'Solar LCOE fell 92% from 2010 to 2025',
        source: { title: NEW_TITLE, url: newUrl },
      },
    ]);
    const secondStart = (await h.client.workflow.getHandle(second).describe()).startTime;
    // The previous run's start as that run's workflow saw it (a few ms after the server's record).
    expect(Math.abs(Date.parse(changes.since) - secondStart.getTime())).toBeLessThan(1_000);

    // The schedule's recent runs carry what each report found: nothing for the first (no
    // comparison), no change for the second, the change for the third, and for the fourth a
    // comparison whose claims were not compared.
    const view = (await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView;
    const byRun = new Map(view.recentRuns.map((r) => [r.id, r.changes]));
    expect(byRun.get(first)).toBeUndefined();
    expect(byRun.get(second)).toMatchObject({ previousId: first, newSourceCount: 0, changedClaimCount: 0, claimsCompared: true });
    expect(byRun.get(third)).toEqual(changes);
    expect(byRun.get(fourth)).toMatchObject({ previousId: third, newSourceCount: 0, changedClaimCount: 0, claimsCompared: false });

    // The run's own status says the same, and the fourth's report says why it claims nothing.
    const status = (await request(h.app).get(`/v1/research/${third}`).expect(200)).body as ResearchView;
    expect(status.changes).toEqual(changes);
    const last = (await request(h.app).get(`/v1/research/${fourth}`).expect(200)).body as ResearchView;
    expect(last.notes?.join('\n')).toContain('Claims and figures were not compared');
    const report = (await request(h.app).get(`/v1/research/${fourth}/report?format=json`).expect(200)).body as ReportJson;
    expect(report.markdown).toContain('Claims and figures were not compared this time');
    recordHistories([[third, 'notify-on-change.json']]);
  }, 300_000);

  it('always (the default): every report calls the webhook', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const id = await schedule('/always');
    expect(((await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView).notify).toBe('always');
    const runs = [await runOnce(id, 1), await runOnce(id, 2)];
    const heard = await until(() => {
      const d = receiver.deliveries.filter((x) => runs.includes(x.body.researchId));
      return d.length === 2 ? d : undefined;
    });
    expect(heard.map((d) => d.body.researchId).sort()).toEqual([...runs].sort());
    expect(heard.every((d) => d.event === 'report_ready' && d.body.data.changes === undefined)).toBe(true);
  }, 180_000);
});
