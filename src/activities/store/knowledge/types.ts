// The knowledge base's row shapes: what the tables' functions take and return.

export interface CollectionRow {
  collectionId: string;
  tenant: string;
  name: string;
  description: string;
  language: string;
  createdAt: string;
  documents: number;
  chunks: number;
}

export type DocumentStatus = 'queued' | 'fetching' | 'parsing' | 'embedding' | 'ready' | 'failed';

export interface DocumentRow {
  documentId: string;
  tenant: string;
  collectionId: string | null;
  sessionId: string | null;
  name: string;
  format: string | null;
  contentType: string | null;
  sourceUrl: string | null;
  contentHash: string | null;
  size: number;
  status: DocumentStatus;
  error: string | null;
  title: string;
  pages: number | null;
  chunksTotal: number;
  chunksEmbedded: number;
  createdAt: string;
  updatedAt: string;
}

export interface NewDocument {
  documentId: string;
  tenant: string;
  collectionId: string | null;
  sessionId?: string | null;
  name: string;
  format?: string | null;
  contentType?: string | null;
  sourceUrl?: string | null;
  contentHash?: string | null;
  bytes?: Buffer | null;
  status: DocumentStatus;
}

export interface NewChunk {
  seq: number;
  text: string;
  headingPath: string[];
  page?: number | undefined;
  tokens: number;
}

export interface ChunkKey {
  documentId: string;
  seq: number;
}

export interface ChunkRow extends ChunkKey {
  text: string;
  headingPath: string[];
  page: number | null;
  collectionId: string | null;
  sessionId: string | null;
  documentName: string;
  documentTitle: string;
  sourceUrl: string | null;
}

/** Where a search looks: a tenant's collections and, optionally, one session's memory. */
export interface SearchScope {
  tenant: string;
  collectionIds: string[];
  sessionId?: string | undefined;
}

/** How vectors are searched: pgvector's HNSW index, or an exact scan of the plain arrays. */
export type VectorMode = 'pgvector' | 'exact';
