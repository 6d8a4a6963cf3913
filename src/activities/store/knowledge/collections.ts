// kb_collections: a tenant's named collections, each with its full-text language.
import type pg from 'pg';
import { isCjkLanguage } from '../../../shared/knowledge';
import type { CollectionRow } from './types';

export interface NewCollection {
  collectionId: string;
  tenant: string;
  name: string;
  description: string;
  language: string;
}

function toCollection(r: Record<string, unknown>): CollectionRow {
  return {
    collectionId: r.collection_id as string,
    tenant: r.tenant as string,
    name: r.name as string,
    description: r.description as string,
    language: r.language as string,
    createdAt: new Date(r.created_at as string).toISOString(),
    documents: Number(r.documents),
    chunks: Number(r.chunks),
  };
}

export function collectionsTable(pool: pg.Pool) {
  /** True for a text search configuration of this server, or a CJK language (bigrams over `simple`, which every server has). */
  async function languageExists(language: string): Promise<boolean> {
    if (isCjkLanguage(language)) return true;
    const { rowCount } = await pool.query('SELECT 1 FROM pg_ts_config WHERE cfgname = $1', [language]);
    return (rowCount ?? 0) > 0;
  }

  /** Undefined when the tenant already has a collection of that name. */
  async function createCollection(c: NewCollection): Promise<CollectionRow | undefined> {
    const { rowCount } = await pool.query(
      `INSERT INTO kb_collections (collection_id, tenant, name, description, language) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [c.collectionId, c.tenant, c.name, c.description, c.language],
    );
    return rowCount ? getCollection(c.tenant, c.collectionId) : undefined;
  }

  async function listCollections(tenant: string, ids?: string[]): Promise<CollectionRow[]> {
    const { rows } = await pool.query(
      `SELECT k.*, (SELECT count(*) FROM kb_documents d WHERE d.collection_id = k.collection_id) AS documents,
              (SELECT count(*) FROM kb_chunks c WHERE c.collection_id = k.collection_id) AS chunks
       FROM kb_collections k WHERE k.tenant = $1 ${ids ? 'AND k.collection_id = ANY($2)' : ''} ORDER BY k.created_at, k.collection_id`,
      ids ? [tenant, ids] : [tenant],
    );
    return rows.map(toCollection);
  }

  async function countCollections(tenant: string): Promise<number> {
    const { rows } = await pool.query('SELECT count(*) AS n FROM kb_collections WHERE tenant = $1', [tenant]);
    return Number(rows[0].n);
  }

  async function getCollection(tenant: string, collectionId: string): Promise<CollectionRow | undefined> {
    return (await listCollections(tenant, [collectionId]))[0];
  }

  async function findCollectionByName(tenant: string, name: string): Promise<CollectionRow | undefined> {
    const { rows } = await pool.query('SELECT collection_id FROM kb_collections WHERE tenant = $1 AND name = $2', [tenant, name]);
    return rows[0] ? getCollection(tenant, rows[0].collection_id) : undefined;
  }

  async function deleteCollection(tenant: string, collectionId: string): Promise<boolean> {
    const { rowCount } = await pool.query('DELETE FROM kb_collections WHERE tenant = $1 AND collection_id = $2', [tenant, collectionId]);
    return (rowCount ?? 0) > 0;
  }

  return { languageExists, createCollection, countCollections, listCollections, getCollection, findCollectionByName, deleteCollection };
}
