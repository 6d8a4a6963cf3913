// `deep-research --help` and `deep-research <command> --help`: the help is made from the command
// tables (dev, worker, api, keys in cli.ts; the client commands in cli/commands.ts), and a
// command's --help prints its own lines without starting anything or reading the environment.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli';
import { CLIENT_COMMANDS, CLIENT_USAGE, clientCommandHelp } from '../../src/cli/commands';
import { KEYS_USAGE } from '../../src/cli/keys-usage';

let written = '';
beforeEach(() => {
  written = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written += String(chunk);
    return true;
  });
  process.exitCode = undefined;
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

describe('the help of deep-research', () => {
  it('lists every command: dev, worker, api, keys, then the client commands', async () => {
    await main(['--help']);
    expect(written).toMatch(/^Usage: deep-research <command>\n\nCommands:\n {2}dev {6}Start everything/);
    const order = ['dev', 'worker', 'api', 'keys'].map((c) => written.indexOf(`\n  ${c} `));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(written).toContain(`\n\n${CLIENT_USAGE}\n\nConfiguration comes from the environment`);
    for (const c of CLIENT_COMMANDS) expect(written).toContain(`\n  ${c} `);
  });

  it('prints the help of keys for keys --help (exit 0), as the help says', async () => {
    await main(['keys', '--help']);
    expect(written).toBe(`${KEYS_USAGE}\n`);
    expect(process.exitCode).toBeUndefined();
  });

  it('prints what dev does for dev -h, and starts nothing', async () => {
    await main(['dev', '-h']);
    expect(written).toBe(
      'Usage: deep-research dev\n' +
        '  Start everything on this machine: Temporal dev server + Web UI, PostgreSQL\n' +
        '  (embedded PGlite unless DATABASE_URL is set), a worker and the HTTP API.\n' +
        'Configuration comes from the environment; see docs/configuration.md.\n',
    );
  });

  it("prints a client command's lines for <command> --help, even with an invalid environment", async () => {
    vi.stubEnv('API_PORT', 'not-a-port');
    try {
      await main(['steer', 'research-1', '--help']);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(written).toBe(clientCommandHelp('steer'));
    expect(process.exitCode).toBeUndefined();
  });

  it('takes a --help after -- as an argument, not as a request for help', async () => {
    vi.stubEnv('API_PORT', 'not-a-port');
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await main(['run', '--', '--help']);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(written).toBe('');
    expect(String(err.mock.calls[0]?.[0])).toMatch(/^Invalid configuration:\n {2}API_PORT: /);
    expect(process.exitCode).toBe(2);
  });
});
