// The sandbox against the real Docker engine: each attack with its expected outcome.
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxActivities, SANDBOX_LABEL, type SandboxInput, type SandboxResult } from '../../src/activities/sandbox';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { databaseUrl, dockerAvailable, missingReason } from '../support/services';

const ready = dockerAvailable() && Boolean(databaseUrl());
const docker = new Docker();

describe.skipIf(!ready)(`sandbox attack suite (${ready ? 'live' : missingReason()})`, () => {
  let pool: ReturnType<typeof createPool>;
  let sandbox: ReturnType<typeof createSandboxActivities>;
  /** The same sandbox with room for real work: a test of what a program produces should not hang
   *  on the 4 s limit the attack tests need when the machine is busy. */
  let roomy: ReturnType<typeof createSandboxActivities>;
  const researchId = `sandbox-${randomUUID()}`;

  beforeAll(() => {
    pool = createPool(databaseUrl()!, 4);
    const withLimit = (timeoutSeconds: number) =>
      createSandboxActivities({
        docker,
        store: createStore(pool),
        limits: {
          image: process.env.SANDBOX_IMAGE ?? 'deep-research-sandbox:latest',
          memoryMb: 256,
          cpus: 1,
          pids: 64,
          timeoutSeconds,
          outputBytes: 65_536,
          artifactFiles: 20,
          artifactFileBytes: 2_000_000,
          artifactTotalBytes: 8_000_000,
        },
      });
    sandbox = withLimit(4);
    roomy = withLimit(30);
  });
  afterAll(async () => pool?.end());

  const run = (code: string, extra: Partial<SandboxInput> = {}, activityId = randomUUID(), box = sandbox): Promise<SandboxResult> =>
    new MockActivityEnvironment({ activityId }).run(box.runCode, { researchId, stepId: 'calc', attempt: 1, code, ...extra });
  const leftovers = async () =>
    (await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`${SANDBOX_LABEL}.run=${researchId}`] }) })).length;

  it('runs code with the data it is given and keeps its chart and CSV as artifacts', async () => {
    const code = [
      'import pandas as pd, matplotlib.pyplot as plt',
      "df = pd.read_csv('prices.csv')",
      'print(df.assign(drop=df.usd.pct_change().round(2)).to_string(index=False))',
      "df.plot(x='year', y='usd'); plt.savefig('/output/chart.png')",
      "df.to_csv('/output/table.csv', index=False)",
    ].join('\n');
    const r = await run(
      code,
      { files: [{ name: 'prices.csv', content: 'year,usd\n2010,0.445\n2016,0.129\n2022,0.049\n' }] },
      randomUUID(),
      roomy,
    );
    expect(r, r.stderr).toMatchObject({ status: 'ok', exitCode: 0 });

    expect(r.stdout).toMatch(/2022\s+0\.049\s+-0\.62/);
    expect(r.artifacts.map((a) => [a.name, a.contentType])).toEqual([
      ['chart.png', 'image/png'],
      ['table.csv', 'text/csv'],
    ]);
    const { rows } = await pool.query(
      'SELECT size, substring(bytes from 1 for 4) AS head FROM artifacts WHERE research_id = $1 AND artifact_id = $2',
      [researchId, 'calc-1-chart.png'],
    );
    expect(rows[0].size).toBeGreaterThan(1000);
    expect(rows[0].head).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(await leftovers()).toBe(0);
  });

  it("finds matplotlib's font list in place, built with the image, and uses it as it is", async () => {
    // Matplotlib rewrites the list when it cannot use it; unchanged after the import means it was used.
    const code = [
      'import glob, os',
      "lists = lambda: sorted((os.path.basename(p), os.stat(p).st_mtime_ns) for p in glob.glob(os.environ['MPLCONFIGDIR'] + '/fontlist-*.json'))",
      'before = lists()',
      'import matplotlib.font_manager',
      "print([name for name, _ in before], 'unchanged' if lists() == before else 'rebuilt')",
    ].join('\n');
    const r = await run(code, {}, randomUUID(), roomy);
    expect(r, r.stderr).toMatchObject({ status: 'ok', exitCode: 0 });
    expect(r.stdout.trim()).toMatch(/^\['fontlist-v\d+\.json'\] unchanged$/);
  });

  it('kills an infinite loop at the time limit and reports a timeout; the container is gone', async () => {
    const t0 = Date.now();
    const r = await run('while True:\n    pass');
    expect(r.status).toBe('timeout');
    expect(r.message).toBe('killed after 4 s (wall-clock limit)');
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(await leftovers()).toBe(0);
  });

  it('contains a fork bomb with the process limit and reports it', async () => {
    const r = await run('import os\nwhile True:\n    os.fork()');
    expect(['error', 'timeout']).toContain(r.status);
    expect(r.stderr).toMatch(/BlockingIOError|Resource temporarily unavailable/);
    expect(await leftovers()).toBe(0);
  });

  it('reports a memory bomb as out of memory', async () => {
    const r = await run('x = bytearray(1024 * 1024 * 1024)\nprint(len(x))');
    expect(r.status).toBe('oom');
    expect(r.message).toBe('out of memory: the code used more than 256 MB');
  });

  it('cuts 100 MB of stdout at the cap, marked truncated, without buffering it in the worker', async () => {
    const before = process.memoryUsage().rss;
    const r = await run("import sys\nchunk = 'x' * 1048576\nfor _ in range(100):\n    sys.stdout.write(chunk)\nprint('end')");
    expect(r.status).toBe('ok');
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(4_001);
    expect(process.memoryUsage().rss - before).toBeLessThan(50_000_000);
  });

  it('has no network: socket, DNS and HTTP all fail', async () => {
    const code = [
      'import socket, urllib.request',
      'def attempt(name, fn):',
      '    try:',
      '        fn(); print(name, "OPEN")',
      '    except Exception as e:',
      '        print(name, "failed", type(e).__name__)',
      'attempt("socket", lambda: socket.create_connection(("1.1.1.1", 80), timeout=2))',
      'attempt("dns", lambda: socket.getaddrinfo("example.com", 80))',
      'attempt("http", lambda: urllib.request.urlopen("http://example.com", timeout=2))',
    ].join('\n');
    const r = await run(code);
    expect(r.stdout).toMatch(/socket failed/);
    expect(r.stdout).toMatch(/dns failed/);
    expect(r.stdout).toMatch(/http failed/);
    expect(r.stdout).not.toMatch(/OPEN/);
  });

  it('denies /etc/shadow, writes under /usr and setuid, and has no Docker socket', async () => {
    const code = [
      'import os',
      'def attempt(name, fn):',
      '    try:',
      '        fn(); print(name, "ALLOWED")',
      '    except Exception as e:',
      '        print(name, "denied", type(e).__name__)',
      'attempt("shadow", lambda: open("/etc/shadow").read())',
      'attempt("usr", lambda: open("/usr/evil", "w").write("x"))',
      'attempt("setuid", lambda: os.setuid(0))',
      'print("uid", os.getuid(), "docker.sock", os.path.exists("/var/run/docker.sock"))',
    ].join('\n');
    const r = await run(code);
    expect(r.stdout).toMatch(/shadow denied PermissionError/);
    expect(r.stdout).toMatch(/usr denied OSError/);
    expect(r.stdout).toMatch(/setuid denied PermissionError/);
    expect(r.stdout).toMatch(/uid 10001 docker.sock False/);
    expect(r.stdout).not.toMatch(/ALLOWED/);
  });

  it('fails a program that ends well but prints nothing and keeps no file, and says what to do', async () => {
    // What a small model wrote as its program: a bare name, which Python evaluates and exits 0.
    const r = await run('SyntaxError');
    expect(r).toMatchObject({ status: 'error', exitCode: 0, stdout: '', artifacts: [] });
    expect(r.message).toMatch(/^ran in \d+ ms but printed nothing and saved no file: print the results/);
    // A file alone is a result.
    const chart = await run("open('/output/note.txt', 'w').write('x')");
    expect(chart.status).toBe('ok');
  });

  it('reports a full /tmp as no space left', async () => {
    const r = await run("with open('/tmp/fill', 'wb') as f:\n    f.write(b'x' * 40 * 1024 * 1024)");
    expect(r.status).toBe('error');
    expect(r.message).toMatch(/No space left on device/);
  });

  it('rejects 1,000 output files beyond the cap and a symlink to /etc/passwd', async () => {
    const code = [
      'import os',
      'for i in range(1000):',
      "    open(f'/output/f{i:04d}.txt', 'w').write('x')",
      "os.symlink('/etc/passwd', '/output/aaa-passwd.txt')",
    ].join('\n');
    const r = await run(code);
    expect(r.status).toBe('ok');
    expect(r.artifacts.length).toBeLessThanOrEqual(20);
    expect(r.artifacts.map((a) => a.name)).not.toContain('aaa-passwd.txt');
    expect(r.rejected).toEqual(
      expect.arrayContaining([
        { name: 'aaa-passwd.txt', reason: 'symlink' },
        expect.objectContaining({ reason: 'too many files (at most 20)' }),
      ]),
    );
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM artifacts WHERE research_id = $1 AND name LIKE '%passwd%'", [
      researchId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('records a result once: a rerun of the same activity returns it without a container', async () => {
    const activityId = randomUUID();
    const first = await run('import random\nprint(random.random())', {}, activityId);
    const second = await run('import random\nprint(random.random())', {}, activityId);
    expect(second).toEqual(first);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM sandbox_runs WHERE call_key LIKE $1', [`%/${activityId}`]);
    expect(rows[0].n).toBe(1);
  });

  it('removes the container an earlier attempt left, and sweeps expired orphans', async () => {
    const activityId = randomUUID();
    const image = process.env.SANDBOX_IMAGE ?? 'deep-research-sandbox:latest';
    const orphan = await docker.createContainer({
      Image: image,
      Cmd: ['sleep', '300'],
      Labels: {
        [SANDBOX_LABEL]: '1',
        [`${SANDBOX_LABEL}.run`]: researchId,
        [`${SANDBOX_LABEL}.activity`]: `default-test-run-id/${activityId}`,
        [`${SANDBOX_LABEL}.expires`]: String(Date.now() + 600_000),
      },
      HostConfig: { NetworkMode: 'none' },
    });
    await orphan.start();
    const expired = await docker.createContainer({
      Image: image,
      Cmd: ['sleep', '300'],
      // Expired an hour from now: the sweeps of workers that other test files start leave it alone,
      // so the sweep below (at a clock two hours ahead, over this run only) is the one that removes it.
      Labels: { [SANDBOX_LABEL]: '1', [`${SANDBOX_LABEL}.run`]: researchId, [`${SANDBOX_LABEL}.expires`]: String(Date.now() + 3_600_000) },
      HostConfig: { NetworkMode: 'none' },
    });
    await expired.start();
    const env = new MockActivityEnvironment({ activityId, workflowExecution: { workflowId: 'w', runId: 'default-test-run-id' } });
    const r = (await env.run(sandbox.runCode, { researchId, stepId: 'calc', attempt: 1, code: 'print(1)' })) as SandboxResult;
    expect(r.status).toBe('ok');
    await expect(orphan.inspect()).rejects.toThrow(/no such container/i);
    expect(await sandbox.sweepSandboxes(Date.now() + 7_200_000, researchId)).toBe(1);
    await expect(expired.inspect()).rejects.toThrow(/no such container/i);
    expect(await leftovers()).toBe(0);
  });
});
