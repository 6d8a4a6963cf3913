// Network faults between a worker and the services it talks to: a Toxiproxy server (built by
// scripts/toxiproxy.ts) with one TCP proxy per service, and the faults the network suite needs,
// set and lifted through Toxiproxy's REST API.
//
// - blackHole: connections stay open (no FIN, no RST) and every byte either way is dropped; new
//   connections are accepted and then hear nothing. Only a client's own timeout or keepalive tells
//   it; lifting the fault closes the connections it held (Toxiproxy ends them: their lost bytes
//   cannot be resent), as a peer does that answers a dead connection with RST once the network heals.
// - cut: every connection is reset (RST) at its next byte, and so is every new one.
// - latency: each chunk is held that long in both directions.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './spawn';

export type Fault = 'blackHole' | 'cut' | 'latency';

const STREAMS = ['upstream', 'downstream'] as const;

export class Toxiproxy {
  private constructor(
    private readonly child: ChildProcess,
    private readonly api: string,
    private output: string[],
  ) {}

  static async start(binary: string): Promise<Toxiproxy> {
    const port = await freePort();
    const child = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    for (const s of [child.stdout!, child.stderr!]) s.on('data', (b: Buffer) => output.push(b.toString()));
    const t = new Toxiproxy(child, `http://127.0.0.1:${port}`, output);
    for (const end = Date.now() + 20_000; ;) {
      if (child.exitCode !== null) throw new Error(`toxiproxy exited (${child.exitCode}):\n${output.join('')}`);
      if (
        await t.call('GET', '/version').then(
          () => true,
          () => false,
        )
      )
        return t;
      if (Date.now() > end) throw new Error(`toxiproxy did not answer on ${t.api}:\n${output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.api}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`toxiproxy ${method} ${path}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  /** A proxy to `upstream` (host:port) on a free loopback port; returns the address to use instead. */
  async proxy(name: string, upstream: string): Promise<string> {
    const listen = `127.0.0.1:${await freePort()}`;
    await this.call('POST', '/proxies', { name, listen, upstream, enabled: true });
    return listen;
  }

  /** Sets a fault on one proxy (replacing any other): see the file's head for what each does. */
  async fault(name: string, fault: Fault, latencyMs = 1_000): Promise<void> {
    await this.restore(name);
    const [type, attributes] =
      fault === 'blackHole'
        ? ['timeout', { timeout: 0 }]
        : fault === 'cut'
          ? ['reset_peer', { timeout: 0 }]
          : ['latency', { latency: latencyMs, jitter: 0 }];
    for (const stream of STREAMS) {
      await this.call('POST', `/proxies/${name}/toxics`, { name: `${fault}-${stream}`, type, stream, toxicity: 1, attributes });
    }
  }

  /** Lifts every fault of one proxy: black-holed connections are closed, delayed ones go on. */
  async restore(name: string): Promise<void> {
    const toxics = (await this.call('GET', `/proxies/${name}/toxics`)) as { name: string }[];
    for (const t of toxics) await this.call('DELETE', `/proxies/${name}/toxics/${t.name}`);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }

  /** The server's log (what the proxies saw), for a failing test's message. */
  log(): string {
    return this.output.join('');
  }
}
