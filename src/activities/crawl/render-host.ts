// A render host: a process of its own that renders pages in headless Chromium for the worker
// (render-pool.ts), one page at a time. Whatever a hostile page does to Chromium or to the code
// that drives it (an exception Playwright throws inside an event handler, a renderer that never
// answers, memory that runs away) ends in this process, which the worker then kills: never in
// the worker, whose activities, workflows and, in `dev`, API and database share its process.
import { bannedDomainOf } from '../../shared/domains';
import { createBrowserRenderer, type BrowserRenderer } from './browser';
import type { FromHost, ToHost, WireError } from './render-protocol';

let renderer: BrowserRenderer | undefined;

function send(message: FromHost): void {
  process.send?.(message);
}

function wire(err: unknown): WireError {
  const e = err as { name?: string; message?: string; status?: number; code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code;
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: String(e.message ?? err).slice(0, 2_000),
    ...(typeof e.status === 'number' ? { status: e.status } : {}),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

async function render(id: number, url: string, banned: string[]): Promise<void> {
  if (!renderer) throw new Error('the render host was not initialised');
  const refuse = (u: URL) => {
    const domain = bannedDomainOf(u.href, banned);
    return domain ? `the user banned ${domain} from this research` : undefined;
  };
  try {
    const page = await renderer.render(url, { refuse });
    send({ type: 'rendered', id, page });
  } catch (err) {
    send({ type: 'failed', id, error: wire(err) });
  }
}

process.on('message', (message: ToHost) => {
  if (message.type === 'init') renderer = createBrowserRenderer(message.limits);
  else if (message.type === 'render') void render(message.id, message.url, message.banned);
});

// The worker went away (it stopped, or was killed): the browser goes with this process.
process.on('disconnect', () => {
  void (renderer?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
});

// Last resort: what escapes is logged, and the host ends; the worker fails the page it was on.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err: unknown) => {
    process.stderr.write(`render host: ${event}: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(70);
  });
}
