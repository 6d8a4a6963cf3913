// The client commands' table: the help is made from it, `<command> --help` prints an entry's
// lines, and a command line the command cannot run with is refused (exit 2, the help on stderr)
// before anything is sent to the API. The API here is a closed port: reaching for it would exit 1.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CLIENT_COMMANDS, CLIENT_USAGE, clientCommandHelp, runClientCommand } from '../../src/cli/commands';
import type { Io } from '../../src/cli/io';
import { ResearchRequest } from '../../src/shared/schemas';

const CLOSED = { api: 'http://127.0.0.1:9', key: undefined };

async function cli(command: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), ask: async () => undefined };
  const code = await runClientCommand(command, args, CLOSED, io);
  return { code, out, err };
}

describe('the client command table', () => {
  it('has every command in the help, in the order of the table', () => {
    expect(CLIENT_COMMANDS).toEqual([
      'run',
      'status',
      'list',
      'approve',
      'revise',
      'answer',
      'steer',
      'cancel',
      'report',
      'rewrite',
      'kb',
      'session',
      'schedule',
      'search-prefs',
      'memory',
      'eval',
      'mcp',
    ]);
    const starts = CLIENT_COMMANDS.map((name) => CLIENT_USAGE.indexOf(`\n  ${name} `));
    expect(starts.every((i) => i > 0)).toBe(true);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  });

  it.each(CLIENT_COMMANDS)('prints the lines of %s for --help, without asking the API', async (name) => {
    const r = await cli(name, 'x', '--help');
    expect(r).toEqual({ code: 0, out: clientCommandHelp(name), err: '' });
    expect(r.out).toMatch(new RegExp(`^Usage:\\n {2}${name} `));
    expect(CLIENT_USAGE).toContain(r.out.split('\n')[1]);
  });

  it('has no help for a command it does not have', () => {
    expect(clientCommandHelp('frobnicate')).toBeUndefined();
  });

  it.each([
    [['frobnicate'], 'unknown command frobnicate'],
    [['status'], 'status needs a run id'],
    [['run'], 'run needs a question: deep-research run "<question>"'],
    [['run', 'why?', '--option', 'nope'], '--option nope is not k=v'],
    [['run', 'why?', '--effort', 'extreme'], '--effort must be quick, standard, deep, not "extreme"'],
    [['run', 'why?', '--mode', 'swarm'], '--mode must be plan or supervisor, not "swarm"'],
    [
      ['run', 'why?', '--models', 'writer=gpt-4.1'],
      '--models takes role=model pairs, a role being one of coordinator, planner, researcher, coder, judge, reporter; not "writer=gpt-4.1"',
    ],
    [['report', 'research-1', '--format', 'odt'], '--format must be md, json, html, pdf, docx, pptx, not "odt"'],
    [['report', 'research-1', '--version', '0'], '--version must be a report version (1, 2, ...), not "0"'],
    [['rewrite'], 'rewrite needs a run id'],
    [['rewrite', 'research-1'], 'rewrite needs at least one of --length, --locale, --audience, --instructions, --model'],
    [['rewrite', 'research-1', '--length', 'epic'], '--length must be brief, standard, long, not "epic"'],
    [['answer', 'research-1'], 'answer needs the answer: deep-research answer <id> "<text>"'],
    [['revise', 'research-1'], 'revise needs --feedback TEXT or an edit of a step (--edit, --drop, --add, --edits)'],
    [['revise', 'research-1', '--edit', 'a'], '--edit STEP needs --title, --description, --step-type or --after'],
    [['revise', 'research-1', '--add', 'c', '--title', 'T'], '--add STEP needs --title and --description'],
    [['revise', 'research-1', '--edit', 'a', '--step-type', 'poem'], '--step-type must be research or processing'],
    [['revise', 'research-1', '--edits', '{"kind":"remove"}'], '--edits must be a JSON array of edits'],
    [['steer', 'research-1'], 'steer needs one of --guidance, --ban, --read, --collection, --wrap-up, --drop, --edit, --add'],
    [['steer', 'research-1', '--edit', 'a'], 'steer needs --description TEXT'],
    [['steer', 'research-1', '--add', 'a', '--description', 'd'], 'steer needs --title TEXT'],
    [['eval'], 'eval needs --dataset FILE.jsonl'],
    [['eval', '--dataset', 'q.jsonl', '--limit', '0'], '--limit must be a whole number of at least 1'],
    [['schedule', 'create', 'why?', '--option', 'x'], '--option x is not k=v'],
    [['schedule', 'create', 'why?', '--every', '1d', '--notify', 'sometimes'], '--notify must be always or on_change'],
    [['search-prefs', 'clear'], 'search-prefs takes show or set, not clear'],
    [['memory', 'wipe'], 'memory takes list, edit, delete or forget-all, not wipe'],
    [['memory', 'edit', 'F0123456789abcdef'], 'memory needs a fact id and the new text'],
    [['memory', 'delete'], 'memory needs one fact id'],
  ])('refuses %j before it calls the API', async ([command, ...args], message) => {
    const r = await cli(command!, ...args);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`${message}\n\n${CLIENT_USAGE}\n`);
    expect(r.out).toBe('');
  });

  it('says when the API cannot be reached (exit 1)', async () => {
    const r = await cli('status', 'research-1');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: cannot reach the API at http:\/\/127\.0\.0\.1:9 /);
  });

  it('prints the report as the model writes it, says when it starts again, then writes the checked report to a file', async () => {
    const events = [
      { type: 'started', data: { question: 'why?' } },
      { type: 'phase', data: { phase: 'reporting', status: 'running', planVersion: 1 } },
      { type: 'draft', data: { part: 'report', attempt: 1, offset: 0, text: 'Costs fe' } },
      {
        type: 'draft',
        data: { part: 'report', attempt: 2, offset: 0, text: 'Costs fell', restart: true, reason: 'an earlier attempt stopped' },
      },
      { type: 'draft', data: { part: 'report', attempt: 2, offset: 10, text: ' [1].', final: true } },
      { type: 'report', data: { title: 'Costs' } },
      { type: 'done', data: { status: 'completed', outcome: 'report' } },
    ];
    const at = new Date().toISOString();
    const server = createServer((req, res) => {
      if (req.method === 'POST') {
        res.writeHead(202, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ id: 'research-1', status: 'running' }));
      }
      if (req.url?.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        events.forEach((e, i) => res.write(`id: ${i + 1}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, at })}\n\n`));
        return void res.end();
      }
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# Costs\n\nCosts fell [1].\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(path.join(tmpdir(), 'cli-draft-'));
    try {
      const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      let out = '';
      const io: Io = { out: (t) => void (out += t), err: (t) => void (out += t), ask: async () => undefined };
      const file = path.join(dir, 'report.md');
      expect(await runClientCommand('run', ['why?', '--out', file], { api, key: undefined }, io)).toBe(0);
      expect(out).toContain(
        '· the report, as the model writes it (a draft: its citations are checked next)\nCosts fe\n\n' +
          '*(This part starts again: an earlier attempt stopped.)*\n\nCosts fell [1].\n',
      );
      expect(out).toContain(`Report written to ${file}`);
      expect(readFileSync(file, 'utf8')).toBe('# Costs\n\nCosts fell [1].\n');
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends a revision\u2019s step edits as the API takes them', async () => {
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(text));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'research-1', planVersion: 2, decision: 'revising', nextPlanVersion: 3 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      let out = '';
      const io: Io = { out: (t) => void (out += t), err: (t) => void (out += t), ask: async () => undefined };
      const line = ['research-1', '--version', '2', '--drop', 'b', '--edit', 'a', '--title', 'Prices', '--after', 'none'];
      expect(await runClientCommand('revise', line, { api, key: undefined }, io)).toBe(0);
      expect(out).toBe('plan v2 sent back; v3 is being made\n');
      expect(bodies).toEqual([
        {
          planVersion: 2,
          edits: [
            { kind: 'remove', stepId: 'b' },
            { kind: 'setTitle', stepId: 'a', title: 'Prices' },
            { kind: 'setDependencies', stepId: 'a', dependsOn: [] },
          ],
        },
      ]);
    } finally {
      server.close();
    }
  });

  it('sends --effort as the run option effort, under what --option sets; --mode as researchMode', async () => {
    const bodies: unknown[] = [];
    // Answers the submit as the API does when no worker is there to run it.
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        bodies.push({ method: req.method, url: req.url, body: JSON.parse(text || '{}') });
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'no_worker', message: 'no worker is polling the task queue' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      let err = '';
      const io: Io = { out: () => undefined, err: (t) => void (err += t), ask: async () => undefined };
      const code = await runClientCommand('run', ['why?', '--effort', 'deep', '--option', 'maxSteps=2'], { api, key: undefined }, io);
      expect(code).toBe(1);
      expect(err).toBe('error: no worker is polling the task queue (503 no_worker)\n');
      await runClientCommand(
        'run',
        ['why?', '--effort', 'deep', '--mode', 'plan', '--models', 'researcher=m-small, reporter=m-large'],
        { api, key: undefined },
        io,
      );
      expect(bodies).toEqual([
        { method: 'POST', url: '/v1/research', body: { question: 'why?', options: { effort: 'deep', maxSteps: 2 } } },
        {
          method: 'POST',
          url: '/v1/research',
          body: {
            question: 'why?',
            options: { effort: 'deep', researchMode: 'plan', models: { researcher: 'm-small', reporter: 'm-large' } },
          },
        },
      ]);
      // The API puts the preset under the request: deep runs the supervisor unless the request says plan.
      expect(ResearchRequest.parse({ question: 'q', options: { effort: 'deep' } }).options?.researchMode).toBe('supervisor');
      expect(ResearchRequest.parse({ question: 'q', options: { effort: 'deep', researchMode: 'plan' } }).options?.researchMode).toBe(
        'plan',
      );
      expect(ResearchRequest.parse({ question: 'q', options: { effort: 'standard' } }).options?.researchMode).toBeUndefined();
    } finally {
      server.close();
    }
    expect(clientCommandHelp('run')).toContain('[--effort quick|standard|deep]');
    expect(clientCommandHelp('run')).toContain('[--mode plan|supervisor]');
  });

  it('refuses a flag no command has', async () => {
    await expect(cli('status', 'research-1', '--frobnicate')).rejects.toThrow(/Unknown option '--frobnicate'/);
  });
});
