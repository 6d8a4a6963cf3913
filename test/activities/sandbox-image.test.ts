// The offline-built sandbox image is present and runs the scientific stack with no network.
import Docker from 'dockerode';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dockerAvailable, missingReason } from '../support/services';

const IMAGE = process.env.SANDBOX_IMAGE ?? 'deep-research-sandbox:latest';

describe.skipIf(!dockerAvailable())(`sandbox image (${dockerAvailable() ? 'live' : missingReason()})`, () => {
  it('runs numpy, pandas, matplotlib and scipy as a non-root user without network', async () => {
    const docker = new Docker();
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (c: Buffer) => chunks.push(c));
    const script = [
      'import os, socket, numpy, pandas, scipy, matplotlib',
      'matplotlib.use("Agg")',
      'import matplotlib.pyplot as plt',
      'plt.plot([1, 2, 3]); plt.savefig("/work/chart.png")',
      'print("uid", os.getuid())',
      'print("mean", numpy.mean([1, 2, 3]), pandas.DataFrame({"a": [1, 2]}).a.sum())',
      'try:\n    socket.create_connection(("1.1.1.1", 80), timeout=2); print("net open")\nexcept OSError as e:\n    print("net blocked")',
    ].join('\n');
    const [result, container] = (await docker.run(IMAGE, ['python3', '-c', script], stdout, {
      HostConfig: {
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        Tmpfs: { '/work': 'rw,size=64m,uid=10001,gid=10001' },
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        AutoRemove: false,
      },
      Labels: { 'org.deep-research.test': 'sandbox-image' },
    })) as [{ StatusCode: number }, Docker.Container];
    await container.remove({ force: true });
    const out = Buffer.concat(chunks).toString();
    expect(result.StatusCode).toBe(0);
    expect(out).toMatch(/uid 10001/);
    expect(out).toMatch(/mean 2\.0 3/);
    expect(out).toMatch(/net blocked/);
  }, 60_000);
});
