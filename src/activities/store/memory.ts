// What the service remembers about each user (per tenant and user id): facts with their evidence,
// and the tombstones deleted facts leave so old evidence never teaches them again. Learning runs
// in one transaction per user, under an advisory lock, so two runs of one user that end together
// merge one after the other instead of writing over each other.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import {
  normalize,
  type Evidence,
  type FactCategory,
  type MemoryFact,
  type MemoryOwner,
  type MergeResult,
  type Tombstone,
} from '../../shared/memory';
import { inTransaction } from './knowledge/transaction';

type Row = { id: string; category: string; text: string; evidence: Evidence[]; created_at: Date; updated_at: Date; user_id: string };

const fact = (r: Row): MemoryFact => ({
  id: r.id,
  category: r.category as FactCategory,
  text: r.text,
  evidence: r.evidence,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export const newFactId = () => `F${randomBytes(8).toString('hex')}`;

type Query = Pick<pg.Pool, 'query'>;

async function listFacts(db: Query, owner: MemoryOwner): Promise<MemoryFact[]> {
  const { rows } = await db.query<Row>('SELECT * FROM user_facts WHERE tenant = $1 AND user_id = $2 ORDER BY created_at, id', [
    owner.tenant,
    owner.userId,
  ]);
  return rows.map(fact);
}

async function bury(db: Query, tenant: string, userId: string, norm: string, evidence: Evidence[]): Promise<void> {
  await db.query('INSERT INTO user_fact_tombstones (tenant, user_id, norm, evidence) VALUES ($1, $2, $3, $4)', [
    tenant,
    userId,
    norm,
    JSON.stringify(evidence),
  ]);
}

export function memoryTable(pool: pg.Pool) {
  return {
    list: (owner: MemoryOwner) => listFacts(pool, owner),

    /** A fact of the tenant's, with its user; undefined for an unknown id or another tenant's. */
    async get(tenant: string, id: string): Promise<{ fact: MemoryFact; userId: string } | undefined> {
      const { rows } = await pool.query<Row>('SELECT * FROM user_facts WHERE tenant = $1 AND id = $2', [tenant, id]);
      return rows[0] && { fact: fact(rows[0]), userId: rows[0].user_id };
    },

    /**
     * Corrects a fact; a changed text buries the old one (what was said before may not teach it
     * again). `userId`: only a fact of that user (absent: any user's of the tenant).
     */
    async update(tenant: string, id: string, change: { text?: string | undefined; category?: FactCategory | undefined }, userId?: string) {
      return inTransaction(pool, async (db) => {
        const { rows } = await db.query<Row & { norm: string }>(
          'SELECT * FROM user_facts WHERE tenant = $1 AND id = $2 AND ($3::text IS NULL OR user_id = $3) FOR UPDATE',
          [tenant, id, userId ?? null],
        );
        const old = rows[0];
        if (!old) return undefined;
        const text = change.text ?? old.text;
        if (normalize(text) !== old.norm) await bury(db, tenant, old.user_id, old.norm, []);
        const updated = await db.query<Row>(
          'UPDATE user_facts SET text = $3, norm = $4, category = $5, updated_at = now() WHERE tenant = $1 AND id = $2 RETURNING *',
          [tenant, id, text, normalize(text), change.category ?? old.category],
        );
        return fact(updated.rows[0]!);
      });
    },

    /** Deletes a fact, leaving its tombstone; false when the tenant (or `userId`, when given) has no such fact. */
    async remove(tenant: string, id: string, userId?: string): Promise<boolean> {
      return inTransaction(pool, async (db) => {
        const { rows } = await db.query<Row & { norm: string }>(
          'DELETE FROM user_facts WHERE tenant = $1 AND id = $2 AND ($3::text IS NULL OR user_id = $3) RETURNING *',
          [tenant, id, userId ?? null],
        );
        const r = rows[0];
        if (r) await bury(db, tenant, r.user_id, r.norm, r.evidence);
        return r !== undefined;
      });
    },

    /** Deletes every fact of a user, each leaving its tombstone; returns how many there were. */
    async forgetAll(owner: MemoryOwner): Promise<number> {
      return inTransaction(pool, async (db) => {
        const { rows } = await db.query<Row & { norm: string }>('DELETE FROM user_facts WHERE tenant = $1 AND user_id = $2 RETURNING *', [
          owner.tenant,
          owner.userId,
        ]);
        for (const r of rows) await bury(db, owner.tenant, owner.userId, r.norm, r.evidence);
        return rows.length;
      });
    },

    /**
     * Learns: `merge` gets the user's facts and tombstones and says what to keep; the facts it
     * changed are written and those it dropped deleted, all under the user's lock.
     */
    async learn(owner: MemoryOwner, merge: (known: MemoryFact[], tombstones: Tombstone[]) => MergeResult): Promise<MergeResult> {
      return inTransaction(pool, async (db) => {
        await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`user-memory/${owner.tenant}/${owner.userId}`]);
        const known = await listFacts(db, owner);
        const { rows } = await db.query<{ norm: string; evidence: Evidence[]; deleted_at: Date }>(
          'SELECT norm, evidence, deleted_at FROM user_fact_tombstones WHERE tenant = $1 AND user_id = $2',
          [owner.tenant, owner.userId],
        );
        const result = merge(
          known,
          rows.map((r) => ({ norm: r.norm, evidence: r.evidence, deletedAt: r.deleted_at.toISOString() })),
        );
        for (const f of result.facts.filter((x) => result.changed.includes(x.id))) {
          await db.query(
            `INSERT INTO user_facts (id, tenant, user_id, category, text, norm, evidence, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (id) DO UPDATE SET evidence = EXCLUDED.evidence, updated_at = EXCLUDED.updated_at`,
            [f.id, owner.tenant, owner.userId, f.category, f.text, normalize(f.text), JSON.stringify(f.evidence), f.createdAt, f.updatedAt],
          );
        }
        if (result.dropped.length) {
          await db.query('DELETE FROM user_facts WHERE tenant = $1 AND user_id = $2 AND id = ANY($3)', [
            owner.tenant,
            owner.userId,
            result.dropped,
          ]);
        }
        return result;
      });
    },

    /** Removes a user's facts and tombstones for good (tests clean up with it). */
    async purge(tenant: string): Promise<void> {
      await pool.query('DELETE FROM user_facts WHERE tenant = $1', [tenant]);
      await pool.query('DELETE FROM user_fact_tombstones WHERE tenant = $1', [tenant]);
    },
  };
}
export type MemoryTable = ReturnType<typeof memoryTable>;
