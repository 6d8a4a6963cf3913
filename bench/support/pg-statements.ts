// The SQL statements one database ran during the load, counted by PostgreSQL's pg_stat_statements
// where the server loads it (shared_preload_libraries) and the admin URL's database has its view
// (CREATE EXTENSION pg_stat_statements): two snapshots of its call counts, and the difference.
// Its counters are the server's, kept across connections and databases; nothing is reset.
import pg from 'pg';

/** Calls so far of each statement (by PostgreSQL's query id) of one database, with its text. */
export type StatementSnapshot = Map<string, { calls: number; text: string }>;

/** The snapshot, or why there is none (the extension not loaded, its view missing, no right to it). */
export async function statementSnapshot(adminUrl: string, database: string): Promise<StatementSnapshot | string> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string; calls: number; query: string | null }>(
      `SELECT s.queryid::text AS id, s.calls::float8 AS calls, s.query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = $1`,
      [database],
    );
    const snapshot: StatementSnapshot = new Map();
    for (const r of rows) {
      const seen = snapshot.get(r.id);
      // The same query id under two users: one statement here.
      snapshot.set(r.id, { calls: (seen?.calls ?? 0) + r.calls, text: r.query ?? '(text hidden from this user)' });
    }
    return snapshot;
  } catch (err) {
    return `pg_stat_statements not readable here: ${(err as Error).message}`;
  } finally {
    await c.end();
  }
}

export interface StatementCounts {
  /** Statements per run, all of them. */
  perRun: number;
  /** The most frequent, per run, with their text cut to one short line. */
  top: { perRun: number; text: string }[];
}

/** What ran between two snapshots, per run. */
export function statementsBetween(before: StatementSnapshot, after: StatementSnapshot, runs: number, topN = 8): StatementCounts {
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
