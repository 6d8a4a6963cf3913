// Named (prepared) statements on a PostgreSQL server: a statement with parameters is parsed and
// planned once per connection and then only bound and executed, instead of parsed, analysed and
// planned at every call. A run makes about 200 statements, most of them the same few dozen texts.
//
// Not for PGlite: its connections share its one session (pglite-server.ts), where a name one
// connection prepared would already exist for the next. Not behind a pooler that hands a client
// a different server session per transaction and does not track prepared statements itself
// (PgBouncer before 1.21 in transaction mode): DATABASE_NAMED_STATEMENTS=false turns them off.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Statement texts named per connection, at most; beyond them a statement goes unnamed. The
 * service's own texts are a few dozen; the bound keeps a text built with values in it (which
 * would be a new statement at every call) from growing a session's memory without end.
 */
export const MAX_NAMED_PER_CONNECTION = 256;

type QueryFn = (...args: unknown[]) => unknown;

/** Gives a client's parameterized statements (text and values) a name derived from their text. */
export function nameStatements(client: pg.ClientBase): void {
  const original = client.query.bind(client) as QueryFn;
  const names = new Map<string, string>();
  const named: QueryFn = (...args) => {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values)) {
      let name = names.get(text);
      if (name === undefined && names.size < MAX_NAMED_PER_CONNECTION) {
        name = `dr_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
        names.set(text, name);
      }
      if (name !== undefined) args.splice(0, 2, { name, text, values });
    }
    return original(...args);
  };
  (client as unknown as { query: QueryFn }).query = named;
}
