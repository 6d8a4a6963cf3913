// sessions and session_runs: a conversation's runs, whose reports become its searchable memory.
import type pg from 'pg';

export interface SessionRow {
  sessionId: string;
  title: string;
  createdAt: string;
}

export interface SessionRunRow {
  researchId: string;
  question: string;
  askedAt: string;
  status: string | null;
  reportTitle: string | null;
}

export function sessionsTable(pool: pg.Pool) {
  async function createSession(s: { sessionId: string; tenant: string; title: string }): Promise<void> {
    await pool.query('INSERT INTO sessions (session_id, tenant, title) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      s.sessionId,
      s.tenant,
      s.title,
    ]);
  }

  async function getSession(tenant: string, sessionId: string): Promise<SessionRow | undefined> {
    const { rows } = await pool.query('SELECT session_id, title, created_at FROM sessions WHERE tenant = $1 AND session_id = $2', [
      tenant,
      sessionId,
    ]);
    const r = rows[0];
    return r ? { sessionId: r.session_id, title: r.title, createdAt: new Date(r.created_at).toISOString() } : undefined;
  }

  /** The tenant's sessions, newest first, with how many runs each has. */
  async function listSessions(tenant: string, limit = 100): Promise<(SessionRow & { runs: number })[]> {
    const { rows } = await pool.query(
      `SELECT s.session_id, s.title, s.created_at, (SELECT count(*)::int FROM session_runs r WHERE r.session_id = s.session_id) AS runs
       FROM sessions s WHERE s.tenant = $1 ORDER BY s.created_at DESC, s.session_id LIMIT $2`,
      [tenant, limit],
    );
    return rows.map((r) => ({ sessionId: r.session_id, title: r.title, createdAt: new Date(r.created_at).toISOString(), runs: r.runs }));
  }

  async function addSessionRun(sessionId: string, researchId: string, question: string): Promise<void> {
    await pool.query('INSERT INTO session_runs (session_id, research_id, question) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      sessionId,
      researchId,
      question,
    ]);
  }

  /** The session's runs in the order asked, with their report's title when one exists. */
  async function sessionRuns(sessionId: string): Promise<SessionRunRow[]> {
    const { rows } = await pool.query(
      `SELECT s.research_id, s.question, s.asked_at, r.status, p.title
       FROM session_runs s LEFT JOIN research_runs r ON r.id = s.research_id LEFT JOIN reports p ON p.research_id = s.research_id
       WHERE s.session_id = $1 ORDER BY s.asked_at, s.research_id`,
      [sessionId],
    );
    return rows.map((r) => ({
      researchId: r.research_id,
      question: r.question,
      askedAt: new Date(r.asked_at).toISOString(),
      status: r.status ?? null,
      reportTitle: r.title ?? null,
    }));
  }

  return { createSession, getSession, listSessions, addSessionRun, sessionRuns };
}
