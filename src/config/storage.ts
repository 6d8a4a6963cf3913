// Where data lives: PostgreSQL (or the embedded PGlite) and the data directory.
import { z } from 'zod';
import { area, int, optionalString, port, trueOrFalse } from './setting-kit';

const storageSettings = {
  DATABASE_URL: optionalString
    .pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'expected postgres://user:pass@host:port/db')
        .optional(),
    )
    .describe('PostgreSQL (`postgres://user:pass@host:port/db`); unset, `dev` serves an embedded PGlite database'),
  DATABASE_POOL_MAX: int(1, 100).default(10).describe('connections per process'),
  DATABASE_NAMED_STATEMENTS: trueOrFalse(true).describe(
    "`true`: statements are prepared once per connection to `DATABASE_URL` (less of the server's CPU); `false` for a pooler that moves a client between server sessions and does not track prepared statements (PgBouncer before 1.21 in transaction mode). Never for the embedded PGlite",
  ),
  PGLITE_PORT: port.default(5433).describe('loopback port of the embedded database'),
  DATA_DIR: z
    .string()
    .default('.data')
    .describe(
      "Temporal's SQLite file (write-ahead log, `synchronous=normal`: a killed server loses nothing, a power cut may lose the last commits) and PGlite's data",
    ),
};

export const storageArea = area('Storage', storageSettings, (v) => ({
  dataDir: v.DATA_DIR,
  database: { url: v.DATABASE_URL, poolMax: v.DATABASE_POOL_MAX, namedStatements: v.DATABASE_NAMED_STATEMENTS, pglitePort: v.PGLITE_PORT },
}));
