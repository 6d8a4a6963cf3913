// A process and everything it started, read from /proc (Linux): how much memory the tree holds and
// how to end all of it. A browser's processes (its renderers, GPU and network helpers, zygotes)
// are started by the browser, not by us, and a renderer whose browser died is adopted by init:
// ending only the pid we spawned would leave them running. So the tree is frozen first (SIGSTOP,
// repeated until no new descendant appears: a stopped process forks nothing), then killed.
import { readdirSync, readFileSync } from 'node:fs';

/** The parent of every process on the machine (pid → ppid); empty where there is no /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) is in parentheses and may hold spaces or ")": ppid follows the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.set(Number(entry), ppid);
    } catch {
      // It ended while we read.
    }
  }
  return out;
}

/** The pid and all its living descendants. */
export function processTree(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(byParent.get(tree[i]!) ?? []));
  return tree;
}

/**
 * Memory the tree holds, in bytes: the proportional set size (shared pages divided among the
 * processes that share them), so that Chromium's processes, which map the same binary, are not
 * counted several times over. 0 for a process that is gone or unreadable.
 */
export function treeMemoryBytes(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      total += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
    } catch {
      // Gone, or not ours to read.
    }
  }
  return total;
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Ends the process and every descendant: frozen until the tree stops growing, then killed. */
export function killTree(root: number): void {
  const frozen = new Set<number>();
  for (let round = 0; round < 10; round++) {
    const fresh = processTree(root).filter((pid) => !frozen.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) if (signal(pid, 'SIGSTOP')) frozen.add(pid);
  }
  frozen.add(root);
  for (const pid of frozen) signal(pid, 'SIGKILL');
}
