// Chromium in a network namespace of its own: a namespace whose only interface is a loopback that
// is down, so that no packet Chromium makes by itself (WebRTC's UDP, a connection the proxy
// setting misses) can reach any address, the host's loopback included. The page still loads:
// every request it makes is fulfilled by the interceptor over the DevTools pipe, never a socket.
//
// Playwright starts the executable it is given with Chromium's arguments, so the namespace is made
// by a small wrapper script that execs `unshare --net` (with `--map-root-user` when not root: an
// unprivileged user namespace) and then Chromium, passing the DevTools pipe's descriptors along.
// Kernels or containers that refuse new namespaces (Docker's default seccomp profile does) get no
// wrapper: the caller says so, and WebRTC is then kept out only by removing it from every frame.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type NetnsChoice = { wrapper: string; reason?: undefined } | { wrapper: undefined; reason: string };

/** The `unshare` arguments that make a network namespace here, or why none can be made. */
function unshareArgs(): string[] | { reason: string } {
  const asRoot = process.getuid?.() === 0;
  const args = asRoot ? ['--net'] : ['--net', '--map-root-user'];
  const probe = spawnSync('unshare', [...args, 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  if (probe.error) return { reason: `unshare could not run (${probe.error.message})` };
  if (probe.status !== 0)
    return { reason: `unshare ${args.join(' ')} failed: ${probe.stderr.toString().trim().slice(0, 200) || `exit ${probe.status}`}` };
  return args;
}

/** A wrapper that runs `executable` in a network namespace of its own, or the reason there is none. */
export function namespacedChromium(executable: string): NetnsChoice {
  const args = unshareArgs();
  if (!Array.isArray(args)) return { wrapper: undefined, reason: args.reason };
  const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = `#!/bin/sh\nexec unshare ${args.join(' ')} -- ${quoted(executable)} "$@"\n`;
  const id = createHash('sha256').update(script).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), `deep-research-chromium-${process.getuid?.() ?? 'user'}`);
  const file = path.join(dir, `chromium-netns-${id}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== script) {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, script, { mode: 0o700 });
    chmodSync(tmp, 0o700);
    // A rename is atomic: a host starting beside this one never runs half a script.
    renameSync(tmp, file);
  }
  return { wrapper: file };
}
