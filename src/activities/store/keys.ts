// API keys kept in PostgreSQL (besides the API_KEYS variable): hashed, listed by id, revoked by id.
import type pg from 'pg';

export interface ApiKeyRow {
  id: string;
  tenant: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** False for a key made with `--no-memory`: its requests neither use nor teach user memory. */
  memory: boolean;
  /** True for a key made with `--admin`: it acts on every user's memory of its tenant (src/api/auth.ts). */
  admin: boolean;
}

export type KeyOwner = Pick<ApiKeyRow, 'tenant' | 'id' | 'memory' | 'admin'>;

export function apiKeysTable(pool: pg.Pool) {
  const row = (r: Record<string, unknown>): ApiKeyRow => ({
    id: String(r.id),
    tenant: String(r.tenant),
    name: (r.name as string | null) ?? null,
    createdAt: new Date(r.created_at as string).toISOString(),
    revokedAt: r.revoked_at ? new Date(r.revoked_at as string).toISOString() : null,
    memory: r.memory !== false,
    admin: r.admin === true,
  });
  return {
    async create(k: {
      id: string;
      tenant: string;
      name?: string | undefined;
      keyHash: string;
      memory?: boolean;
      admin?: boolean;
    }): Promise<ApiKeyRow> {
      const { rows } = await pool.query(
        'INSERT INTO api_keys (id, tenant, name, key_hash, memory, admin) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
        [k.id, k.tenant, k.name ?? null, k.keyHash, k.memory ?? true, k.admin ?? false],
      );
      return row(rows[0]);
    },
    async list(tenant?: string): Promise<ApiKeyRow[]> {
      const { rows } = await pool.query('SELECT * FROM api_keys WHERE ($1::text IS NULL OR tenant = $1) ORDER BY tenant, created_at', [
        tenant ?? null,
      ]);
      return rows.map(row);
    },
    /** True when the key existed and was live. */
    async revoke(id: string): Promise<boolean> {
      const { rowCount } = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      return (rowCount ?? 0) > 0;
    },
    /** Turns user memory on or off for a live key of this tenant; false when there is none. */
    async setMemory(tenant: string, id: string, memory: boolean): Promise<boolean> {
      const { rowCount } = await pool.query('UPDATE api_keys SET memory = $3 WHERE id = $1 AND tenant = $2 AND revoked_at IS NULL', [
        id,
        tenant,
        memory,
      ]);
      return (rowCount ?? 0) > 0;
    },
    /** The tenant of a live key with this hash. */
    async tenantOf(keyHash: string): Promise<string | undefined> {
      const { rows } = await pool.query('SELECT tenant FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]);
      return rows[0]?.tenant as string | undefined;
    },
    /** The live key with this hash: its tenant, id, whether its requests use memory and whether it is an admin key. */
    async ownerOf(keyHash: string): Promise<KeyOwner | undefined> {
      const { rows } = await pool.query('SELECT id, tenant, memory, admin FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [
        keyHash,
      ]);
      const r = rows[0];
      return r && { tenant: String(r.tenant), id: String(r.id), memory: r.memory !== false, admin: r.admin === true };
    },
    async countLive(): Promise<number> {
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL');
      return rows[0].n as number;
    },
  };
}
export type ApiKeysTable = ReturnType<typeof apiKeysTable>;
