// The SQL statements one database ran during the load, counted by PostgreSQL's pg_stat_statements
// where the server loads it (shared_preload_libraries) and the admin URL's database has its view
// (CREATE EXTENSION pg_stat_statements): two snapshots of its call counts, and the difference.
// Its counters are the server's, kept across connections and databases; nothing is reset.
import { adminQuery } from './database';

/** Calls so far of each statement (by PostgreSQL's query id) of one database, with its text. */
type StatementSnapshot = Map<string, { calls: number; text: string }>;

export interface StatementCounts {
  /** Statements per run, all of them. */
  perRun: number;
  /** The most frequent, per run, with their text cut to one short line. */
  top: { perRun: number; text: string }[];
}

/** The snapshot, or why there is none (the extension not loaded, its view missing, no right to it). */
async function snapshot(adminUrl: string, database: string): Promise<StatementSnapshot | string> {
  try {
    const rows = await adminQuery<{ id: string; calls: number; query: string | null }>(
      adminUrl,
      `SELECT s.queryid::text AS id, s.calls::float8 AS calls, s.query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = $1`,
      [database],
    );
    const counts: StatementSnapshot = new Map();
    for (const r of rows) {
      const seen = counts.get(r.id);
      // The same query id under two users: one statement here.
      counts.set(r.id, { calls: (seen?.calls ?? 0) + r.calls, text: r.query ?? '(text hidden from this user)' });
    }
    return counts;
  } catch (err) {
    return `pg_stat_statements not readable here: ${(err as Error).message}`;
  }
}

/** What ran between two snapshots, per run. */
function between(before: StatementSnapshot, after: StatementSnapshot, runs: number, topN = 8): StatementCounts {
  const diffs: { calls: number; text: string }[] = [];
  for (const [id, a] of after) {
    const calls = a.calls - (before.get(id)?.calls ?? 0);
    if (calls > 0) diffs.push({ calls, text: a.text });
  }
  diffs.sort((x, y) => y.calls - x.calls);
  const line = (t: string) => {
    const one = t
      .replace(/--[^\n]*\n/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return one.length > 70 ? `${one.slice(0, 69)}…` : one;
  };
  return {
    perRun: diffs.reduce((s, d) => s + d.calls, 0) / runs,
    top: diffs.slice(0, topN).map((d) => ({ perRun: d.calls / runs, text: line(d.text) })),
  };
}

/** Starts counting `database`'s statements; `finish` gives them per run, or why they were not counted. */
export async function countStatements(
  adminUrl: string,
  database: string,
): Promise<{ finish(runs: number): Promise<StatementCounts | string> }> {
  const before = await snapshot(adminUrl, database);
  return {
    async finish(runs) {
      if (typeof before === 'string') return before;
      const after = await snapshot(adminUrl, database);
      return typeof after === 'string' ? after : between(before, after, runs);
    },
  };
}
