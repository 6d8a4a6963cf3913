// The start-up check of the namespace's search attributes (src/infra/search-attributes.ts): on a
// plain Temporal server (none of the project's attributes) the missing ones are added where the
// connection may; where it may not, the start stops with the commands that add them; a server
// that does not let the connection list them is warned about (issue 57: every request answered
// 500 "invalid search attribute" while the banner and /readyz looked normal).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/infra/logger';
import { addCommands, ensureSearchAttributes, SearchAttributesMissing } from '../../src/infra/search-attributes';
import { startTemporalDevServer, type DevServer } from '../../src/infra/temporal-cli';
import { SEARCH_ATTRIBUTES } from '../../src/shared/constants';
import { missingReason } from '../support/services';
import { freePort } from '../support/spawn';

const cli = inject('temporalCliPath');
const TYPES = proto.temporal.api.enums.v1.IndexedValueType;
const ALL = Object.keys(SEARCH_ATTRIBUTES);

function recordingLog() {
  const lines: string[] = [];
  return { lines, log: { info: (m: string) => void lines.push(`info: ${m}`), warn: (m: string) => void lines.push(`warn: ${m}`) } };
}

describe.skipIf(!cli)(`the namespace's search attributes at start (${cli ? 'live' : missingReason()})`, () => {
  let server: DevServer;
  let connection: Connection;

  beforeAll(async () => {
    server = await startTemporalDevServer({
      cliPath: cli!,
      port: await freePort(),
      uiPort: undefined,
      dbFile: path.join(mkdtempSync(path.join(os.tmpdir(), 'dr-plain-temporal-')), 'temporal.db'),
      namespace: 'plain',
      log: createLogger('warn'),
      searchAttributes: false,
    });
    connection = await Connection.connect({ address: server.address });
  }, 90_000);
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });

  it('adds the missing ones on a plain server, once', async () => {
    const where = { namespace: 'plain', address: server.address };
    const before = await connection.operatorService.listSearchAttributes({ namespace: 'plain' });
    expect(Object.keys(before.customAttributes ?? {}).filter((n) => ALL.includes(n))).toEqual([]);
    const first = recordingLog();
    expect(await ensureSearchAttributes(connection, where, first.log)).toEqual({ added: ALL });
    expect(first.lines).toEqual([`info: added the search attributes ${ALL.join(', ')} to namespace plain`]);
    const after = await connection.operatorService.listSearchAttributes({ namespace: 'plain' });
    expect(after.customAttributes).toMatchObject({
      ResearchStatus: TYPES.INDEXED_VALUE_TYPE_KEYWORD,
      ResearchStepCount: TYPES.INDEXED_VALUE_TYPE_INT,
      ResearchQuestion: TYPES.INDEXED_VALUE_TYPE_TEXT,
    });
    const again = recordingLog();
    expect(await ensureSearchAttributes(connection, where, again.log)).toEqual({ added: [] });
    expect(again.lines).toEqual([]);
  }, 60_000);
});

describe('the check where the server says no', () => {
  const where = { namespace: 'prod', address: 'temporal.example:7233' };
  const listing = (customAttributes: Record<string, number>) => ({
    listSearchAttributes: async () => ({ customAttributes }),
    addSearchAttributes: async () => {
      throw Object.assign(new Error('7 PERMISSION_DENIED: Request unauthorized.'), { code: 7 });
    },
  });

  it('stops the start with the exact commands when the connection may not add them', async () => {
    const conn = { operatorService: listing({ ResearchStatus: TYPES.INDEXED_VALUE_TYPE_KEYWORD }) } as never;
    const err = await ensureSearchAttributes(conn, where, recordingLog().log).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchAttributesMissing);
    const message = (err as Error).message;
    expect(message).toContain(
      'namespace prod lacks the search attributes every run writes (ResearchPhase, ResearchTenant, ResearchStepCount, ResearchQuestion)',
    );
    expect(message).toContain('PERMISSION_DENIED');
    expect(message).toContain(
      'temporal operator search-attribute create --address temporal.example:7233 --namespace prod --name ResearchPhase --name ResearchTenant --type Keyword',
    );
    expect(message).toContain('--name ResearchStepCount --type Int');
    expect(message).toContain('--name ResearchQuestion --type Text');
  });

  it('stops the start when one has another type, naming both', async () => {
    const conn = { operatorService: listing({ ResearchTenant: TYPES.INDEXED_VALUE_TYPE_TEXT }) } as never;
    await expect(ensureSearchAttributes(conn, where, recordingLog().log)).rejects.toThrow(/ResearchTenant is Text, not Keyword/);
  });

  it('warns, with the commands, when the server will not list them', async () => {
    const conn = {
      operatorService: {
        listSearchAttributes: async () => {
          throw new Error('12 UNIMPLEMENTED: unknown method');
        },
      },
    } as never;
    const { lines, log } = recordingLog();
    expect(await ensureSearchAttributes(conn, where, log)).toEqual({ added: [] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warn: could not list the search attributes of namespace prod \(12 UNIMPLEMENTED: unknown method\)/);
    expect(lines[0]).toContain(addCommands(ALL, where).join(' && '));
  });
});
