// `deep-research keys create|list|revoke`: API keys in PostgreSQL (DATABASE_URL, or the embedded
// database of a running `deep-research dev`). A new key is printed once; only its hash is kept.
import { parseArgs } from 'node:util';
import { generateKey, hashKey } from '../api/auth';
import { createStore } from '../activities/store';
import type { Config } from '../config';
import { createPool, redactUrl } from '../infra/postgres';
import { migrate } from '../infra/migrate';
import { TENANT_PATTERN } from '../shared/schemas';
import { KEYS_USAGE } from './keys-usage';

/** Returns the process exit code. */
export async function runKeys(config: Config, argv: string[], out: (s: string) => void): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean' },
      'no-memory': { type: 'boolean' },
      admin: { type: 'boolean' },
    },
  });
  const [sub, arg] = positionals;
  if (!sub || !['create', 'list', 'revoke'].includes(sub)) {
    out(`${KEYS_USAGE}\n`);
    return 2;
  }
  if (values.tenant !== undefined && !TENANT_PATTERN.test(values.tenant)) {
    out('--tenant must be 1-64 letters, digits, ".", "_" or "-"\n');
    return 2;
  }
  const url = config.database.url ?? `postgres://postgres@127.0.0.1:${config.database.pglitePort}/postgres`;
  const pool = createPool(url, 1);
  try {
    try {
      await migrate(pool);
    } catch (err) {
      out(
        `cannot reach the database at ${redactUrl(url)} (${(err as Error).message}): set DATABASE_URL, ` +
          'or start `deep-research dev`, whose embedded database holds the keys\n',
      );
      return 1;
    }
    const keys = createStore(pool).apiKeys;
    if (sub === 'create') {
      if (!values.tenant) {
        out('keys create needs --tenant <tenant>\n');
        return 2;
      }
      const { id, key } = generateKey();
      const memory = values['no-memory'] !== true;
      const admin = values.admin === true;
      await keys.create({ id, tenant: values.tenant, name: values.name, keyHash: hashKey(key), memory, admin });
      if (values.json) out(`${JSON.stringify({ id, tenant: values.tenant, key, memory, admin })}\n`);
      else
        out(
          `key ${id} for tenant ${values.tenant}:\n\n  ${key}\n\nIt is shown only now. Send it as "Authorization: Bearer <key>". ` +
            'An API that started without any key runs open until it restarts.\n',
        );
      return 0;
    }
    if (sub === 'list') {
      const rows = await keys.list(values.tenant);
      if (values.json) {
        out(`${JSON.stringify(rows)}\n`);
        return 0;
      }
      if (!rows.length) out('no keys\n');
      for (const r of rows) {
        const state = `${r.revokedAt ? `revoked ${r.revokedAt}` : 'live'}${r.memory ? '' : ' (no memory)'}${r.admin ? ' (admin)' : ''}`;
        out(`${r.id}  ${r.tenant.padEnd(20)}  ${r.createdAt}  ${state}  ${r.name ?? ''}\n`);
      }
      return 0;
    }
    if (!arg) {
      out('keys revoke needs the key id (see keys list)\n');
      return 2;
    }
    if (!(await keys.revoke(arg))) {
      out(`no live key with id ${arg}\n`);
      return 1;
    }
    out(`key ${arg} revoked\n`);
    return 0;
  } finally {
    await pool.end();
  }
}
