// The processes of the stack under load, read from /proc: CPU time, RSS, threads.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** The fields of /proc/<pid>/stat after the command name (field 3 onwards, 0-based from there). */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process; with `reaped`, also what its exited children used (cutime + cstime). */
export function cpuSeconds(pid: number, reaped = false): number {
  try {
    const f = statFields(`/proc/${pid}/stat`);
    const own = Number(f[11]) + Number(f[12]);
    return (reaped ? own + Number(f[13]) + Number(f[14]) : own) / TICK;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number {
  try {
    return Number(statFields(`/proc/${pid}/stat`)[1]);
  } catch {
    return 0;
  }
}

export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

const pids = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d));

export function childrenOf(pid: number): number[] {
  return pids()
    .map(Number)
    .filter((p) => parentOf(p) === pid);
}

export function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** PostgreSQL's CPU so far: every server process now, plus the backends that already exited
 *  (reaped by the postmaster, counted in its children's time). By pid, to subtract a later reading. */
export function postgresCpu(): Map<number, number> {
  const all = pids()
    .map(Number)
    .filter((p) => commandName(p).startsWith('postgres'));
  const postmaster = all.filter((p) => !all.includes(parentOf(p)));
  return new Map(all.map((p) => [p, cpuSeconds(p, postmaster.includes(p))]));
}

/** The database a PostgreSQL backend serves, from the title PostgreSQL gives its process
 *  ("postgres: [cluster: ]user database host(port) state"); undefined for the server's own
 *  processes (postmaster, checkpointer, writers, autovacuum) or a title it does not keep. */
export function postgresDatabase(pid: number): string | undefined {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    return /^postgres: (?:\S+: )?\S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(title)?.[1];
  } catch {
    return undefined;
  }
}

/** The CPU-seconds each process of the stack used between two readings. */
export class StackCpu {
  private service0: number[];
  private temporal0: number;
  private pg0: Map<number, number>;

  /** `servicePids`: the service's processes (`dev`, or `worker` and `api`). */
  constructor(
    private readonly servicePids: readonly number[],
    private readonly temporalPid: number,
    private readonly withPostgres: boolean,
    /** The service's own database: its backends' CPU is also given apart (`pgService`). */
    private readonly serviceDatabase?: string,
  ) {
    this.service0 = servicePids.map((p) => cpuSeconds(p));
    this.temporal0 = cpuSeconds(temporalPid);
    this.pg0 = withPostgres ? postgresCpu() : new Map();
  }

  /** Since the reading this object was made at: the service (and each of its processes, in the
   *  constructor's order), the Temporal server, PostgreSQL (0 without --pg), and their sum; of
   *  PostgreSQL, `pgService` is what the backends of the service's database used (the rest: the
   *  Temporal server's databases, PostgreSQL's own processes, and backends that exited meanwhile,
   *  whose time the postmaster collects without saying whose it was). */
  used(): { service: number; byProcess: number[]; temporal: number; pg: number; pgService: number; stack: number } {
    const byProcess = this.servicePids.map((p, i) => cpuSeconds(p) - this.service0[i]!);
    const service = byProcess.reduce((a, b) => a + b, 0);
    const temporal = cpuSeconds(this.temporalPid) - this.temporal0;
    let pg = 0;
    let pgService = 0;
    if (this.withPostgres) {
      for (const [pid, t] of postgresCpu()) {
        const used = t - (this.pg0.get(pid) ?? 0);
        pg += used;
        if (this.serviceDatabase && postgresDatabase(pid) === this.serviceDatabase) pgService += used;
      }
    }
    return { service, byProcess, temporal, pg, pgService, stack: service + temporal + pg };
  }
}

/** CPU-seconds of a process by thread (main JS thread, the workflow and extraction threads, V8's
 *  platform threads, Core's tokio threads), so a profile of one thread is read in proportion. */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const mainStart = Number(statFields(`/proc/${pid}/task/${pid}/stat`)[19]);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
        .trim()
        .replace(/[-_:]?\d+$/, '');
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      // Node names none of its own threads: the main thread is the one whose id is the process's;
      // V8's platform threads (garbage collection, compilers) start with the process (within a
      // second of it); the JS worker threads (workflow thread, page extraction) start later.
      const startedLate = (Number(f[19]) - mainStart) / TICK > 1;
      const key = name === 'node' ? (tid === String(pid) ? 'main' : startedLate ? 'JS worker threads' : 'V8 platform threads') : name;
      out.set(key, (out.get(key) ?? 0) + (Number(f[11]) + Number(f[12])) / TICK);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** Jiffies of the whole machine: [idle + iowait, all]. */
export function machineJiffies(): [number, number] {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [f[3]! + f[4]!, f.reduce((a, b) => a + b, 0)];
}

/** Samples the peak RSS of some processes every 250 ms until stopped. */
export class PeakRss {
  readonly peak: Record<string, number>;
  /** Every sample: its time (ms since the epoch) and each process's RSS in MB. */
  readonly samples: { at: number; mb: Record<string, number> }[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number>) {
    this.peak = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, rssMb(p)]));
    this.timer = setInterval(() => this.sample(), 250);
  }

  private sample(): void {
    const mb = Object.fromEntries(Object.entries(this.pids).map(([k, p]) => [k, rssMb(p)]));
    this.samples.push({ at: Date.now(), mb });
    for (const [k, v] of Object.entries(mb)) this.peak[k] = Math.max(this.peak[k] ?? 0, v);
  }

  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}
