// `deep-research eval` against a live API: five questions in DeepResearch Bench's JSONL shape run
// unattended, the submission file and the grounding table written, --resume running only what is
// missing, and a bad dataset refused before anything starts.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClientCommand } from '../../src/cli/commands';
import type { Io } from '../../src/cli/io';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const KEY = 'eval-cli-key-0123456789abcdef';

const QUESTIONS = [
  { id: 1, topic: 'Energy', language: 'en', prompt: 'How far did solar costs fall since 2010?' },
  { id: 2, topic: 'Energy', language: 'en', prompt: 'What limits offshore wind growth?' },
  { id: 3, topic: 'Storage', language: 'en', prompt: 'How cheap are grid batteries now?' },
  { id: 4, topic: 'Grid', language: 'en', prompt: 'Why do grids need more transmission?' },
  { id: 5, topic: 'Policy', language: 'en', prompt: 'Which subsidies drove solar adoption?' },
];

describe.skipIf(!ready)(`eval command (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let server: http.Server;
  let api: string;
  let dir: string;
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${KEY}=evalcli` } });
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(path.join(os.tmpdir(), 'eval-cli-'));
  });
  afterAll(async () => {
    server?.close();
    await h?.close();
  });

  async function cli(...args: string[]) {
    let out = '';
    let err = '';
    const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), ask: async () => undefined };
    const [command, ...rest] = args;
    const code = await runClientCommand(command!, rest, { api, key: KEY }, io);
    return { code, out, err };
  }
  const lines = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; prompt: string; article: string });

  it('runs five questions and writes the submission file and the grounding table', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const dataset = path.join(dir, 'questions.jsonl');
    writeFileSync(dataset, QUESTIONS.map((q) => JSON.stringify(q)).join('\n') + '\n');
    const out = path.join(dir, 'out');
    const r = await cli(
      'eval',
      '--dataset',
      dataset,
      '--out',
      out,
      '--concurrency',
      '3',
      '--model-name',
      'mine',
      '--option',
      'maxResearchLoops=0',
    );
    expect(r.err).not.toMatch(/failed/);
    expect(r.code).toBe(0);

    const submission = lines(path.join(out, 'mine.jsonl'));
    expect(submission.map((s) => s.id).sort()).toEqual(['1', '2', '3', '4', '5']);
    const runs = await h.pool.query<{ id: string; question: string }>(`SELECT id, question FROM research_runs WHERE tenant = 'evalcli'`);
    expect(runs.rows).toHaveLength(5);
    for (const s of submission) {
      expect(s.prompt).toBe(QUESTIONS.find((q) => String(q.id) === s.id)!.prompt);
      const run = runs.rows.find((x) => x.question === s.prompt)!;
      const stored = await h.pool.query('SELECT markdown, grounding FROM reports WHERE research_id = $1', [run.id]);
      expect(s.article).toBe(stored.rows[0].markdown);
    }

    // The table: one row per question, its figures those of the stored report.
    const csv = readFileSync(path.join(out, 'grounding.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(6);
    const header = csv[0]!.split(',');
    for (const row of csv.slice(1)) {
      const cells = Object.fromEntries(row.split(',').map((c, i) => [header[i], c]));
      const stored = await h.pool.query('SELECT markdown, grounding FROM reports WHERE research_id = $1', [cells.runId]);
      const body = (stored.rows[0].markdown as string).split('\n## References\n')[0]!;
      const markers = [...body.matchAll(/\[(\d+)\](?!\()/g)].length;
      expect(markers).toBeGreaterThan(0);
      expect(Number(cells.citations)).toBe(markers);
      expect(Number(cells.citations)).toBe(stored.rows[0].grounding.citations);
      expect(Number(cells.resolvedShare)).toBe(1);
      expect(Number(cells.supportedShare)).toBe(1);
      expect(Number(cells.tokens)).toBeGreaterThan(0);
      expect(Number(cells.wallSeconds)).toBeGreaterThan(0);
    }
    expect(r.out).toMatch(/^id\s+status\s+citations\s+resolved/);
    expect(r.out).toMatch(/\nmean\s+5\/5 completed/);
  }, 120_000);

  it('resumes: only the questions without an article run again', async () => {
    const out = path.join(dir, 'out');
    const file = path.join(out, 'mine.jsonl');
    const kept = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const dropped = JSON.parse(kept[2]!) as { id: string };
    writeFileSync(file, [...kept.slice(0, 2), ...kept.slice(3)].join('\n') + '\n');
    const dataset = path.join(dir, 'questions.jsonl');
    const r = await cli('eval', '--dataset', dataset, '--out', out, '--model-name', 'mine', '--resume');
    expect(r.code).toBe(0);
    expect(r.err).toContain('resuming: 4 done, 1 to run');
    expect(r.err).toContain(`${dropped.id}: completed`);
    expect(
      lines(file)
        .map((s) => s.id)
        .sort(),
    ).toEqual(['1', '2', '3', '4', '5']);
    const runs = await h.pool.query(`SELECT count(*)::int AS n FROM research_runs WHERE tenant = 'evalcli'`);
    expect(runs.rows[0].n).toBe(6);
  }, 60_000);

  it('refuses a bad dataset line before anything starts', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify(QUESTIONS[0])}\n{"id": 2}\n`);
    const r = await cli('eval', '--dataset', bad, '--out', path.join(dir, 'bad-out'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('bad.jsonl:2: no "prompt" (or "question")');
    const runs = await h.pool.query(`SELECT count(*)::int AS n FROM research_runs WHERE tenant = 'evalcli'`);
    expect(runs.rows[0].n).toBe(6);
  });
});
