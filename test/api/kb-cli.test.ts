// `deep-research kb` and `session` against a live API: create a collection, add a file and a URL
// and wait for them, list, remove; start a session. The commands run in-process as the CLI runs them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClientCommand } from '../../src/cli/commands';
import type { Io } from '../../src/cli/io';
import { startHarness, type Harness } from '../support/harness';
import { makeDocx } from '../support/kb-fixtures';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const KEY = 'kb-cli-key-0123456789abcdef';

describe.skipIf(!ready)(`kb and session commands (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let server: http.Server;
  let api: string;
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${KEY}=kbcli` } });
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.close();
    await h?.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), ask: async () => undefined };
    const [command, ...rest] = args;
    const code = await runClientCommand(command!, rest, { api, key: KEY }, io);
    return { code, out, err };
  }

  it('creates a collection, adds a file and a URL, lists them, removes one, then the collection', async () => {
    const created = await cli('kb', 'create', 'Handbooks', '--description', 'Grid storage handbooks');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^C[0-9a-f]{16} {2}Handbooks/);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-cli-'));
    const file = path.join(dir, 'handbook.docx');
    writeFileSync(file, await makeDocx());
    const added = await cli('kb', 'add', 'Handbooks', file, `${h.site.url}/articles/solar-costs.html`, '--wait');
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out.match(/ready/g)?.length).toBe(2);
    const again = await cli('kb', 'add', 'Handbooks', file);
    expect(again.out).toMatch(/already there/);

    const list = await cli('kb', 'list');
    expect(list.out).toMatch(/Handbooks {2}2 documents, \d+ chunks {2}Grid storage handbooks/);
    const docs = await cli('kb', 'list', 'Handbooks', '--json');
    const parsed = JSON.parse(docs.out) as { id: string; name: string; status: string }[];
    expect(parsed.map((d) => d.status)).toEqual(['ready', 'ready']);

    expect((await cli('kb', 'rm', 'Handbooks', parsed[0]!.id)).code).toBe(0);
    expect(JSON.parse((await cli('kb', 'list', 'Handbooks', '--json')).out)).toHaveLength(1);
    expect((await cli('kb', 'rm', 'Handbooks')).code).toBe(0);
    const gone = await cli('kb', 'list', 'Handbooks');
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/no collection "Handbooks"/);
  });

  it('refuses a file it cannot read with the reason, and starts a session', async () => {
    await cli('kb', 'create', 'Misc');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-cli-'));
    const png = path.join(dir, 'chart.png');
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
    const bad = await cli('kb', 'add', 'Misc', png);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/not a format the knowledge base reads.*415 unsupported_format/);
    const s = await cli('session', 'new', 'Storage questions');
    expect(s.out.trim()).toMatch(/^session-[0-9a-f]{16}$/);
    const shown = await cli('session', 'show', s.out.trim());
    expect(shown.out).toMatch(/Storage questions/);
    expect((await cli('kb', 'frobnicate')).code).toBe(2);
  });
});
