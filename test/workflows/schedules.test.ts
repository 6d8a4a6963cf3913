// Recurring research: a schedule on a short interval starts the same research twice, never two at
// once (overlap policy skip). Between the runs the web changes (a new page appears in the search
// results), and the second report starts with "What changed since <date>", naming that page and
// the figure that moved; a change the model names that the stored texts do not bear out is left
// out. Pause, trigger now, list and delete act on the Temporal Schedule.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceIdFor } from '../../src/activities/search/sources';
import { runClientCommand } from '../../src/cli/commands';
import { bySchema } from '../support/llm-server';
import { planJson, researchRules, searchResults, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';
import type { ReportJson, ScheduleList, ScheduleView } from '../../src/api/contract';
import type { SessionView } from '../../src/shared/knowledge';
import type { ResearchView } from '../../src/shared/messages';
import type { ResearchResult } from '../../src/shared/schemas';

const ready = Boolean(temporalAddress() && databaseUrl());
const NEW_PAGE = '/articles/solar-2024.html';
const NEW_TITLE = 'Solar prices in 2024';

async function until<T>(what: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!ready)(`schedules (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { SCHEDULE_MIN_INTERVAL: '1s' } });
    h.site.route(NEW_PAGE, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>${NEW_TITLE}</title></head><body><article><h1>${NEW_TITLE}</h1>` +
          '<p>Solar LCOE fell 91% from 2010 to 2024, according to the latest figures.</p>' +
          '<p>Module prices fell again in 2024 as factories expanded.</p></article></body></html>',
      );
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('runs twice, and the second report says what changed since the first', async () => {
    const newUrl = `${h.site.url}${NEW_PAGE}`;
    const newId = sourceIdFor(newUrl);
    // The web changes once the first run is writing its report: its searches are done, and the
    // schedule starts the second run only after the first has ended.
    let changed = false;
    const changeTheWeb = () => {
      if (changed) return;
      changed = true;
      h.search.setFallback((q) => [
        // Worded for the step's goal ("Find facts for step a"), so the ranking puts it first and
        // the scripted researcher, which reads the first hit, reads it.
        { url: newUrl, title: NEW_TITLE, content: 'Facts for step a. Solar LCOE fell 91% from 2010 to 2024.' },
        ...searchResults(h.site.url)(q),
      ]);
    };
    let changesAsked = '';
    h.llm.script([
      {
        name: 'extract-new-page',
        match: (r) => bySchema('PageExtract')(r) && userText(r).includes(NEW_PAGE),
        reply: { json: { relevant: true, evidence: 'Solar LCOE fell 91% from 2010 to 2024.', summary: 'Solar fell further.' } },
      },
      ...researchRules(
        {
          reporter: (req) => {
            changeTheWeb();
            // The figure is in the report's own words: which source [1] is depends on the ranking.
            // A page the reporter was given about 2024 (the second run's) is cited by its number.
            const newer = new RegExp(`^\\[(\\d+)\\][^\\n]*${NEW_PAGE.replace(/[.]/g, '\\.')}`, 'm').exec(userText(req))?.[1];
            const markdown = `## Key points\n\n- Costs fell sharply: solar LCOE fell 89% from 2010 to 2022 [1].\n- Batteries too [2].${newer ? `\n- Newer figures [${newer}].` : ''}`;
            return { json: { title: 'Solar costs', markdown } };
          },
          changes: (req) => {
            changesAsked = userText(req);
            return {
              json: {
                changes: [
                  {
                    about: 'Solar cost decline',
                    before: 'Solar LCOE fell 89% from 2010 to 2022',
                    now: 'Solar LCOE fell 91% from 2010 to 2024',
                    source: newId,
                  },
                  // Made up: neither figure is in what either run stored.
                  { about: 'Wind', before: 'Wind costs fell 40%', now: 'Wind costs fell 70%', source: newId },
                ],
              },
            };
          },
        },
        planJson([{ id: 'a' }]),
      ),
    ]);

    const made = await request(h.app)
      .post('/v1/schedules')
      .send({ question: 'How far have solar costs fallen?', every: '2s', note: 'weekly solar watch' })
      .expect(201);
    const id = (made.body as ScheduleView).id;
    expect(made.body).toMatchObject({
      paused: false,
      every: '2s',
      question: 'How far have solar costs fallen?',
      note: 'weekly solar watch',
    });

    // Two runs that completed.
    const done = await until(async () => {
      const s = (await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView;
      const ended = [];
      for (const r of [...s.recentRuns].reverse()) {
        const d = await h.client.workflow.getHandle(r.id).describe();
        if (d.status.name === 'COMPLETED') ended.push(d);
      }
      return ended.length >= 2 ? ended.slice(0, 2) : undefined;
    }, 90_000);
    await request(h.app).post(`/v1/schedules/${id}/pause`).send({ note: 'enough for the test' }).expect(200);
    const [first, second] = done as [(typeof done)[number], (typeof done)[number]];
    expect(first.workflowId.startsWith(`research-${id}-`)).toBe(true);
    // Never two at once: the second started after the first had ended.
    expect(second.startTime.getTime()).toBeGreaterThanOrEqual(first.closeTime!.getTime());

    const r1 = (await request(h.app).get(`/v1/research/${first.workflowId}/report?format=json`).expect(200)).body as ReportJson;
    const r2 = (await request(h.app).get(`/v1/research/${second.workflowId}/report?format=json`).expect(200)).body as ReportJson;
    expect(r1.markdown).not.toContain('What changed since');
    const lines = r2.markdown.split('\n').filter((l) => l.trim() && !l.startsWith('>'));
    expect(lines[0]).toBe('# Solar costs');
    expect(lines[1]).toMatch(/^## What changed since \w+ \d{1,2}, \d{4}$/);
    const section = r2.markdown.split('## What changed since')[1]!.split('\n## ')[0]!;
    expect(section).toContain(`[${NEW_TITLE}](${newUrl})`);
    expect(section).toContain(first.workflowId);
    expect(section).toContain('now "Solar LCOE fell 91% from 2010 to 2024"');
    expect(section).not.toContain('Wind');
    // The comparison was shown the earlier report and the new findings.
    expect(changesAsked).toContain('Costs fell sharply');
    expect(changesAsked).toContain(`[${newId}]`);
    // The new page is cited by number in the section, and that number is in the references.
    const n = r2.references.find((x) => x.url === newUrl)?.n;
    expect(n).toBeDefined();
    expect(section).toContain(`(${newUrl}) [${n}]`);

    const status = (await request(h.app).get(`/v1/research/${second.workflowId}`).expect(200)).body as ResearchView;
    expect(status.notes?.join('\n')).toMatch(/What changed since .*1 new source, 1 changed claim.*1 change the model named was left out/);
    const firstStatus = (await request(h.app).get(`/v1/research/${first.workflowId}`).expect(200)).body as ResearchView;
    expect(firstStatus.notes?.join('\n')).toContain(`First report of schedule ${id}`);
    recordHistories([[second.workflowId, 'scheduled.json']]);
  });

  it('pauses, triggers now, lists and deletes; refuses a bad schedule with the reason', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    // Made with the CLI, against the API on a port.
    const server = http.createServer(h.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void out.push(t), ask: async () => undefined };
    const session = ((await request(h.app).post('/v1/sessions').send({ title: 'Wind watch' }).expect(201)).body as SessionView).id;
    const args = [
      'create',
      'Wind costs?',
      '--cron',
      '0 6 * * 1',
      '--timezone',
      'Europe/Berlin',
      '--paused',
      '--option',
      'effort=quick',
      '--session',
      session,
    ];
    const code = await runClientCommand('schedule', [...args, '--json'], { api, key: undefined }, io);
    server.close();
    expect(code).toBe(0);
    const made = JSON.parse(out.join('')) as ScheduleView;
    const id = made.id;
    expect(made).toMatchObject({ question: 'Wind costs?', paused: true, cron: '0 6 * * 1', timezone: 'Europe/Berlin', runsStarted: 0 });
    // Mondays at 06:00 in Berlin: 05:00 or 04:00 UTC.
    expect(made.nextRunsAt.length).toBeGreaterThan(0);
    for (const t of made.nextRunsAt) {
      expect(new Date(t).getUTCDay()).toBe(1);
      expect([4, 5]).toContain(new Date(t).getUTCHours());
    }

    await request(h.app).post(`/v1/schedules/${id}/trigger`).expect(202);
    const run = await until(async () => {
      const s = (await request(h.app).get(`/v1/schedules/${id}`).expect(200)).body as ScheduleView;
      return s.recentRuns[0]?.id;
    });
    expect((await h.client.workflow.getHandle(run).result()) as ResearchResult).toMatchObject({ outcome: 'report' });
    // The scheduled run joined the schedule's session, as a run the API starts does.
    const joined = (await request(h.app).get(`/v1/sessions/${session}`).expect(200)).body as SessionView;
    expect(joined.runs).toEqual([expect.objectContaining({ id: run, question: 'Wind costs?' })]);

    const resumed = await request(h.app).post(`/v1/schedules/${id}/resume`).send({}).expect(200);
    expect(resumed.body.paused).toBe(false);
    // The list comes from Temporal's visibility, which catches up with the resume a moment later.
    const listed = await until(async () => {
      const l = (await request(h.app).get('/v1/schedules').expect(200)).body as ScheduleList;
      return l.schedules.find((s) => s.id === id && !s.paused);
    }, 20_000);
    expect(listed).toMatchObject({ question: 'Wind costs?', cron: '0 6 * * 1', paused: false });

    await request(h.app).delete(`/v1/schedules/${id}`).expect(200);
    await request(h.app).get(`/v1/schedules/${id}`).expect(404);

    const both = await request(h.app).post('/v1/schedules').send({ question: 'Q?', cron: '0 6 * * 1', every: '1h' }).expect(400);
    expect(JSON.stringify(both.body)).toContain('exactly one of cron and every');
    const fast = await request(h.app).post('/v1/schedules').send({ question: 'Q?', every: '100ms' }).expect(400);
    expect(fast.body.error.code).toBe('invalid_schedule');
    const cron = await request(h.app).post('/v1/schedules').send({ question: 'Q?', cron: '61 * * * *' });
    expect(cron.status).toBe(400);
    expect(cron.body.error).toMatchObject({ code: 'invalid_schedule', message: expect.stringContaining('Minute') });
    const zone = await request(h.app)
      .post('/v1/schedules')
      .send({ question: 'Q?', cron: '0 6 * * 1', timezone: 'Mars/Olympus' })
      .expect(400);
    expect(zone.body.error.code).toBe('invalid_schedule');
    await request(h.app).get('/v1/schedules/schedule-nope').expect(400);
  });
});
