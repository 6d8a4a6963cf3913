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

/** The children of a process from /proc/<pid>/task/<tid>/children, or undefined where the kernel has none. */
function childrenOf(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child.trim()) out.push(Number(child));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && tid === String(pid)) return undefined;
    }
  }
  return out;
}

/** The pid and all its living descendants: walked down from the pid (a few reads), or found in a
 *  scan of every process where the kernel does not list children. */
export function processTree(root: number): number[] {
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    const children = childrenOf(tree[i]!);
    if (children === undefined) return scannedTree(root);
    tree.push(...children);
  }
  return tree;
}

function scannedTree(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(byParent.get(tree[i]!) ?? []));
  return tree;
}

/**
 * Memory the tree holds, in bytes: the private (anonymous) resident memory of each process, the
 * memory a page's scripts, DOM and layout take. Shared pages (Chromium's binary and libraries,
 * mapped by every one of its processes) are left out rather than counted once per process. Read
 * from the kernel's counters in /proc/<pid>/status: a few microseconds a process, where
 * smaps_rollup walks every mapping (Chromium reserves terabytes of address space) and took
 * hundreds of milliseconds of the worker's thread.
 */
export function treeMemoryBytes(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      total += Number(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
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
